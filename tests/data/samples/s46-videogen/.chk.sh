for u in "$@"; do grep -qi "^$(echo $u | tr A-Z a-z)$" /work/main/tests/data/samples/s46-videogen/.dedupe.txt && echo "DUP $u" || echo "new $u"; done
