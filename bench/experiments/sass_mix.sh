#!/usr/bin/env bash
# Opcode counts in a kernel's SASS (run where cuobjdump is: the GPU machine).
# usage: sass_mix.sh BINARY KERNEL...
set -euo pipefail
bin=$1; shift
for k in "$@"; do
  echo "== $k"
  cuobjdump -sass -fun "$k" "$bin" |
    grep -oE '^ +/\*[0-9a-f]{4}\*/ +(@!?U?P[0-9T] +)?[A-Z0-9_]+' |
    awk '{print $NF}' | sort | uniq -c | sort -rn | awk '{printf "%s:%s ", $2, $1; t += $1} END {print "total:" t}'
done
