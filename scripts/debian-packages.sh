#!/bin/sh
# Install the Debian packages named in $PACKAGES that are missing, and only
# them: no recommended packages (anope would bring a mail server), and no
# upgrade of what is installed (chromium-driver is pinned to the installed
# chromium's version when that version can still be had).
# Run as root it installs them; otherwise it says what to install.
set -eu
installed_version() {
    dpkg-query -W -f='${Status} ${Version}' "$1" 2>/dev/null |
        sed -n 's/^install ok installed //p'
}
# $UNPACK: packages that conflict with one of $PACKAGES (ircd-hybrid with
# ngircd: both are "an ircd"), unpacked into /opt/NAME instead of installed
# (their dependencies go in $PACKAGES), with their /usr/lib folders linked
# where their programs look for them
for package in ${UNPACK:-}; do
    [ -d "/opt/$package" ] && continue
    if [ "$(id -u)" -ne 0 ]; then
        echo "missing: /opt/$package (as root: apt-get download $package; dpkg-deb -x it there)" >&2
        exit 1
    fi
    echo "unpacking Debian package $package into /opt/$package"
    apt-get update -qq
    scratch=$(mktemp -d) && chmod 755 "$scratch"  # apt downloads as _apt
    (cd "$scratch" && apt-get download -qq "$package")
    dpkg-deb -x "$scratch"/*.deb "/opt/$package.new"
    rm -rf "$scratch"
    for folder in "/opt/$package.new/usr/lib/"*; do
        [ -e "/usr/lib/${folder##*/}" ] || ln -s "/opt/$package/usr/lib/${folder##*/}" /usr/lib/
    done
    mv "/opt/$package.new" "/opt/$package"
done
missing=""
for package in $PACKAGES; do
    [ -n "$(installed_version "$package")" ] || missing="$missing $package"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
    echo "missing Debian packages:$missing (install them as root: apt-get install$missing)" >&2
    exit 1
fi
echo "installing Debian packages:$missing"
apt-get update -qq
wanted=""
for package in $missing; do
    chromium=$(installed_version chromium)
    if [ "$package" = chromium-driver ] && [ -n "$chromium" ] &&
        apt-cache madison chromium-driver | grep -q "| $chromium |"; then
        package="chromium-driver=$chromium"
    fi
    wanted="$wanted $package"
done
# the packages' own services must not start: the hill starts what it needs
# itself, on loopback (policy-rc.d exit 101 forbids starting them)
policy=/usr/sbin/policy-rc.d
created=""
if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod +x "$policy" && created=1
fi
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $wanted
[ -n "$created" ] && rm -f "$policy"
exit 0
