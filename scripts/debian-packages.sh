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
