#!/bin/sh
# Install the Debian packages named in $PACKAGES that are missing.
# Run as root it installs them; otherwise it says what to install.
set -eu
missing=""
for package in $PACKAGES; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "ok installed" ||
        missing="$missing $package"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
    echo "missing Debian packages:$missing (install them as root: apt-get install$missing)" >&2
    exit 1
fi
echo "installing Debian packages:$missing"
apt-get update -qq
# the packages' own services must not start: the hill starts what it needs
# itself, on loopback (policy-rc.d exit 101 forbids starting them)
policy=/usr/sbin/policy-rc.d
created=""
if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod +x "$policy" && created=1
fi
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing
[ -n "$created" ] && rm -f "$policy"
exit 0
