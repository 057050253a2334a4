#!/usr/bin/env bash
# The command line against hostile paths and names (issue 26): outputs that
# are devices, FIFOs, symbolic links, read-only files, the input itself,
# compressed names, two writers at once; plots of traces with shell and
# gnuplot syntax in their names. Every case either works as documented or
# fails with exit 1 or 2 and one line, and never touches what it must not.
set -u
bin=${WG_BIN:?WG_BIN not set}
data=${WG_TEST_DATA:?WG_TEST_DATA not set}
. "$(dirname "$0")/support/cli_check.sh"

no_temporaries() { # nothing but the expected names left in a folder
  local left
  left=$(find "$2" -maxdepth 1 -name '*.tmp' | head -3)
  if [ -n "$left" ]; then
    echo "FAIL $1: temporary files left: $left"
    failures=$((failures + 1))
  else
    pass=$((pass + 1))
  fi
}

g=$data/tiny.gr
"$bin" convert "$g" "$tmp/ref.wgc" >/dev/null 2>&1 || { echo "cannot make the reference cache"; exit 1; }
"$bin" convert "$g" "$tmp/ref.gr" >/dev/null 2>&1 || { echo "cannot make the reference text"; exit 1; }

# /dev/full: the write error is reported, exit 1, and the device stays one.
# As root a broken build would replace /dev/full itself, so root tests a
# private node of the same device instead.
full=/dev/full
if [ "$(id -u)" -eq 0 ]; then
  full=
  if mknod "$tmp/full" c 1 7 2>/dev/null && ! (echo x >"$tmp/full") 2>/dev/null; then
    full=$tmp/full
  fi
fi
if [ -n "$full" ] && [ -c "$full" ]; then
  check full-cache 1 "$bin" convert "$g" "$full"
  one_line_error full-cache
  expect_in full-cache "$tmp/err" "No space left on device"
  check full-sssp 1 "$bin" sssp "$g" -s 1 --out "$full"
  one_line_error full-sssp
  check full-gen 1 "$bin" gen grid --rows 10 --cols 10 -o "$full"
  one_line_error full-gen
  ok full-still-a-device test -c "$full"
else
  echo "note: no usable /dev/full node; its checks skipped"
fi

# /dev/stdout and -: the graph on standard output, the report on stderr.
# A private link stands for /dev/stdout (the same /proc chain), so a broken
# build run as root replaces that link, not /dev/stdout.
ln -s /proc/self/fd/1 "$tmp/stdout"
"$bin" convert "$g" "$tmp/stdout" 2>"$tmp/err" </dev/null | cat >"$tmp/stdout.wgc"
ok stdout-cache cmp -s "$tmp/stdout.wgc" "$tmp/ref.wgc"
ok stdout-link-kept test -L "$tmp/stdout"
"$bin" convert "$g" "$tmp/stdout" >"$tmp/stdout2.wgc" 2>"$tmp/err" </dev/null
ok stdout-file cmp -s "$tmp/stdout2.wgc" "$tmp/ref.wgc"
"$bin" sssp "$g" -s 1 --weights file --out "$tmp/stdout" >"$tmp/stdout.dist" 2>"$tmp/err"
ok stdout-dist cmp -s "$tmp/stdout.dist" "$data/tiny.dist1"
expect_in stdout-dist-table "$tmp/err" "reached"
"$bin" convert "$g" - 2>"$tmp/err" | cat >"$tmp/pipe.gr.wgc"
ok stdout-dash cmp -s "$tmp/pipe.gr.wgc" "$tmp/ref.wgc"
expect_in stdout-report "$tmp/err" "binary cache"

# a FIFO is streamed to (a reader gets the whole file), never replaced
mkfifo "$tmp/fifo"
timeout 20 cat "$tmp/fifo" >"$tmp/from-fifo" &
reader=$!
check fifo 0 timeout 20 "$bin" convert "$g" "$tmp/fifo"
wait $reader
ok fifo-content cmp -s "$tmp/from-fifo" "$tmp/ref.wgc"
ok fifo-still-a-fifo test -p "$tmp/fifo"

# a symbolic link: its target is replaced, the link stays a link
echo old >"$tmp/target.wgc"
ln -s target.wgc "$tmp/link.wgc"
check symlink 0 "$bin" convert "$g" "$tmp/link.wgc"
ok symlink-kept test -L "$tmp/link.wgc"
ok symlink-target cmp -s "$tmp/target.wgc" "$tmp/ref.wgc"
# a dangling link: the file it names is created
ln -s made.gr "$tmp/dangling.gr"
check symlink-dangling 0 "$bin" convert "$g" "$tmp/dangling.gr"
ok symlink-dangling-kept test -L "$tmp/dangling.gr"
ok symlink-dangling-made cmp -s "$tmp/made.gr" "$tmp/ref.gr"

# the old file's mode is kept
echo old >"$tmp/mode.wgc"
chmod 640 "$tmp/mode.wgc"
check mode 0 "$bin" convert "$g" "$tmp/mode.wgc"
ok mode-kept test "$(stat -c %a "$tmp/mode.wgc")" = 640
ok mode-content cmp -s "$tmp/mode.wgc" "$tmp/ref.wgc"

# a read-only file is refused before any work, even for root, and kept
echo precious >"$tmp/ro.wgc"
chmod 444 "$tmp/ro.wgc"
check read-only 1 "$bin" convert "$g" "$tmp/ro.wgc"
one_line_error read-only
expect_in read-only "$tmp/err" "read-only"
ok read-only-kept test "$(cat "$tmp/ro.wgc")" = precious
check read-only-trace 1 "$bin" sssp "$g" -s 1 --algo nearfar --trace "$tmp/ro.wgc"
one_line_error read-only-trace

# a folder, or a missing folder: refused up front
check out-folder 1 "$bin" convert "$g" "$tmp"
one_line_error out-folder
check out-no-folder 1 "$bin" sssp "$g" -s 1 --out "$tmp/none/d.txt"
one_line_error out-no-folder
expect_in out-no-folder "$tmp/err" "none"
# checked before the work: a --repeat job does not run first
check out-checked-first 1 "$bin" gen grid --rows 3000 --cols 3000 -o "$tmp/none/g.wgc"
ok out-checked-first-quick test ! -s "$tmp/out"

# the output naming the input, or two outputs naming one file: refused
cp "$g" "$tmp/in.gr"
check out-is-input 2 "$bin" sssp "$tmp/in.gr" -s 1 --out "$tmp/in.gr"
one_line_error out-is-input
ok out-is-input-kept cmp -s "$tmp/in.gr" "$g"
check out-is-input-convert 2 "$bin" convert "$tmp/in.gr" "$tmp/./in.gr"
one_line_error out-is-input-convert
ln -s in.gr "$tmp/in-link.gr"
check out-is-input-link 2 "$bin" convert "$tmp/in-link.gr" "$tmp/in.gr"
one_line_error out-is-input-link
check out-is-trace 2 "$bin" sssp "$g" -s 1 --algo nearfar --out "$tmp/x.txt" --trace "$tmp/x.txt"
one_line_error out-is-trace
ok out-is-input-kept-2 cmp -s "$tmp/in.gr" "$g"

# compressed names are compressed (and read back), unknown ones refused
for z in gz xz bz2; do
  check "compress-$z" 0 "$bin" convert "$g" "$tmp/c.wgc.$z"
  case $z in gz) un="gzip -dc" ;; xz) un="xz -dc" ;; bz2) un="bzip2 -dc" ;; esac
  if command -v "${un%% *}" >/dev/null; then
    $un "$tmp/c.wgc.$z" >"$tmp/c.wgc"
    ok "compress-$z-content" cmp -s "$tmp/c.wgc" "$tmp/ref.wgc"
  fi
  check "compress-$z-text" 0 "$bin" convert "$g" "$tmp/c.gr.$z"
  check "compress-$z-sssp" 0 "$bin" sssp "$tmp/c.gr.$z" -s 1 --weights file --out "$tmp/d.$z.txt"
  ok "compress-$z-dist" cmp -s "$tmp/d.$z.txt" "$data/tiny.dist1"
done
check compress-zst 2 "$bin" convert "$g" "$tmp/c.wgc.zst"
one_line_error compress-zst
expect_in compress-zst "$tmp/err" "zstd"
ok compress-zst-absent test ! -e "$tmp/c.wgc.zst"

# two runs writing one name at once: both succeed, the result is whole
"$bin" gen grid --rows 300 --cols 300 -o "$tmp/same.wgc" >/dev/null 2>"$tmp/err1" &
p1=$!
"$bin" gen grid --rows 300 --cols 300 -o "$tmp/same.wgc" >/dev/null 2>"$tmp/err2" &
p2=$!
wait $p1; r1=$?
wait $p2; r2=$?
ok concurrent-both test "$r1" -eq 0 -a "$r2" -eq 0
check concurrent-whole 0 "$bin" info "$tmp/same.wgc"
expect_in concurrent-whole "$tmp/out" "90,000"
no_temporaries concurrent-no-temporaries "$tmp"

# compressed OSM, PBF and cache inputs: content checked as it streams into
# the temporary folder (a gzip of zeros stops at once), errors name the
# user's file, nothing is left behind
head -c 20000000 /dev/zero | gzip -1 >"$tmp/zeros.gz"
for name in zeros.osm.gz zeros.osm.pbf.gz zeros.wgc.gz; do
  cp "$tmp/zeros.gz" "$tmp/$name"
  check "stream-$name" 1 "$bin" info "$tmp/$name"
  one_line_error "stream-$name"
  expect_in "stream-$name" "$tmp/err" "$name"
done
expect_in stream-cache-reason "$tmp/err" "bad magic"
(cat "$tmp/ref.wgc"; head -c 1000 /dev/zero) | gzip >"$tmp/long.wgc.gz"
check stream-cache-too-long 1 "$bin" info "$tmp/long.wgc.gz"
expect_in stream-cache-too-long "$tmp/err" "bytes its cache header declares"
python3 - "$tmp/ref.wgc" "$tmp/bad.wgc" <<'PY'
import sys
d = bytearray(open(sys.argv[1], 'rb').read()); d[-5] ^= 0xff
open(sys.argv[2], 'wb').write(d)
PY
gzip -f "$tmp/bad.wgc"
check stream-cache-names-user-file 1 "$bin" info "$tmp/bad.wgc.gz"
expect_in stream-cache-names-user-file "$tmp/err" "bad.wgc.gz: checksum mismatch"
if grep -q "wattgraph-" "$tmp/err"; then
  echo "FAIL stream-cache-names-user-file: the temporary name leaked: $(cat "$tmp/err")"
  failures=$((failures + 1))
else pass=$((pass + 1)); fi

# one meaning per input: an unweighted graph weighs 1 a arc in sssp, info,
# convert and the library alike, and every result says so
printf 'p tw 5 4\n1 2\n2 3\n3 4\n4 5\n' >"$tmp/path.gr"
check unit-sssp 0 "$bin" sssp "$tmp/path.gr" -s 1 --out "$tmp/unit1.txt"
expect_in unit-sssp-says "$tmp/out" "every arc weighs 1"
expect_in unit-sssp-max "$tmp/out" "max dist   4"
check unit-convert 0 "$bin" convert "$tmp/path.gr" "$tmp/path.wgc"
expect_in unit-convert-says "$tmp/out" "every arc weighs 1"
check unit-sssp-cache 0 "$bin" sssp "$tmp/path.wgc" -s 1 --out "$tmp/unit2.txt"
ok unit-same-distances cmp -s "$tmp/unit1.txt" "$tmp/unit2.txt"
check unit-info 0 "$bin" info "$tmp/path.gr"
expect_in unit-info-says "$tmp/out" "every arc weighs 1"
check unit-json 0 "$bin" sssp "$tmp/path.gr" -s 1 --json
expect_in unit-json-says "$tmp/out" '"weights":"unit"'
check drawn-json 0 "$bin" sssp "$tmp/path.gr" -s 1 --weights random --json
expect_in drawn-json-says "$tmp/out" '"weights":"drawn"'

# Matrix Market reals: refused unless scaled, and then scaled
printf '%%%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 0.4\n2 3 1.25\n' >"$tmp/r.mtx"
check mtx-real 1 "$bin" sssp "$tmp/r.mtx" -s 1
one_line_error mtx-real
expect_in mtx-real "$tmp/err" "r.mtx:3: value 0.4 is not a whole number"
check mtx-real-scaled 0 "$bin" sssp "$tmp/r.mtx" -s 1 --weight-scale 100 --out "$tmp/r.txt"
ok mtx-real-scaled-dist test "$(cat "$tmp/r.txt" | tr '\n' ' ')" = "1 0 2 40 3 165 "

# SNAP: undirected by the header or by --undirected
printf '# Undirected graph: x\n1\t2\n2\t3\n' >"$tmp/u.txt"
check snap-undirected-header 0 "$bin" sssp "$tmp/u.txt" -s 3 --out "$tmp/u.dist"
ok snap-undirected-header-dist test "$(cat "$tmp/u.dist" | tr '\n' ' ')" = "1 2 2 1 3 0 "
printf '1\t2\n2\t3\n' >"$tmp/d.txt"
check snap-directed 0 "$bin" sssp "$tmp/d.txt" -s 3 --out "$tmp/d.dist"
ok snap-directed-dist test "$(cat "$tmp/d.dist" | tr '\n' ' ')" = "1 inf 2 inf 3 0 "
check snap-undirected-flag 0 "$bin" sssp "$tmp/d.txt" -s 3 --undirected --out "$tmp/d2.dist"
ok snap-undirected-flag-dist test "$(cat "$tmp/d2.dist" | tr '\n' ' ')" = "1 2 2 1 3 0 "

# users get what they came for: a path, predecessors, JSON apart, -q quiet
check sssp-path 0 "$bin" sssp "$g" -s 1 --to 5 --path "$tmp/path.txt" --out "$tmp/pred.txt" --with-pred
printf '1 0\n3 9\n6 11\n5 20\n' >"$tmp/path.want"
ok sssp-path-file cmp -s "$tmp/path.txt" "$tmp/path.want"
expect_in sssp-path-table "$tmp/out" "to 5: distance 20 over 3 arcs"
printf '1 0 -\n2 7 1\n3 9 1\n4 20 3\n5 20 6\n6 11 3\n7 inf -\n' >"$tmp/pred.want"
ok sssp-with-pred cmp -s "$tmp/pred.txt" "$tmp/pred.want"
"$bin" sssp "$g" -s 1 --to 5 --path - >"$tmp/path-stdout.txt" 2>"$tmp/err"
ok sssp-path-stdout cmp -s "$tmp/path-stdout.txt" "$tmp/path.want"
check sssp-path-unreachable 1 "$bin" sssp "$g" -s 1 --to 7 --path "$tmp/p7.txt"
one_line_error sssp-path-unreachable
check sssp-path-no-to 2 "$bin" sssp "$g" -s 1 --path "$tmp/p.txt"
one_line_error sssp-path-no-to
check sssp-path-no-pred 2 "$bin" sssp "$g" -s 1 --to 5 --path "$tmp/p.txt" --no-pred
one_line_error sssp-path-no-pred
check sssp-json-out-dash 2 "$bin" sssp "$g" -s 1 --json --out -
one_line_error sssp-json-out-dash
check sssp-json-version 0 "$bin" sssp "$g" -s 1 --json --repeat 3
expect_in sssp-json-version "$tmp/out" '"version":"'
expect_in sssp-json-rate "$tmp/out" '"arcs_per_second":'
check sssp-quiet 0 "$bin" sssp "$g" -s 1 -q
if grep -q "unavailable" "$tmp/out" "$tmp/err"; then
  echo "FAIL sssp-quiet: -q still prints unavailable meters"; failures=$((failures + 1))
else pass=$((pass + 1)); fi

# smaller: a UTF-8 byte-order mark is skipped in every text format; gzip
# zero padding is accepted, other trailing data not; zstd is named; info
# names the cache format
printf '\xef\xbb\xbfp sp 2 1\na 1 2 3\n' >"$tmp/bom.gr"
printf '\xef\xbb\xbf%%%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 2 3\n' >"$tmp/bom.mtx"
printf '\xef\xbb\xbf1 2 3\n' >"$tmp/bom.txt"
for f in bom.gr bom.mtx bom.txt; do
  check "bom-$f" 0 "$bin" sssp "$tmp/$f" -s 1 --out "$tmp/$f.dist"
  ok "bom-$f-dist" test "$(tr '\n' ' ' <"$tmp/$f.dist")" = "1 0 2 3 "
done
(gzip -c "$g"; head -c 3000 /dev/zero) >"$tmp/pad.gr.gz"
check gzip-padding 0 "$bin" sssp "$tmp/pad.gr.gz" -s 1 --out "$tmp/pad.dist"
ok gzip-padding-dist cmp -s "$tmp/pad.dist" "$data/tiny.dist1"
(gzip -c "$g"; head -c 300 /dev/zero; echo junk) >"$tmp/padjunk.gr.gz"
check gzip-padding-junk 1 "$bin" info "$tmp/padjunk.gr.gz"
one_line_error gzip-padding-junk
printf '\x28\xb5\x2f\xfd\x04\x00\x00\x00\x00\x00' >"$tmp/x.gr.zst"
check zstd-input 1 "$bin" info "$tmp/x.gr.zst"
one_line_error zstd-input
expect_in zstd-input "$tmp/err" "zstd-compressed input is not supported"
check info-cache 0 "$bin" info "$tmp/ref.wgc"
expect_in info-cache "$tmp/out" "wattgraph cache (binary), converted from dimacs"

# OSM XML: one huge attribute is refused at once (it made expat quadratic),
# ids past what readosm can hold are reported, not wrapped
{
  printf '<?xml version="1.0"?>\n<osm version="0.6">\n<node id="1" lat="1" lon="1">\n<tag k="name" v="'
  head -c 8000000 /dev/zero | tr '\0' x
  printf '"/>\n</node>\n</osm>\n'
} >"$tmp/long.osm"
# (refused by a bound on the tag's length, not by a timer: no timing
# assertion here, the timeout only stops a regression from hanging CI)
check osm-long-attribute 1 timeout 60 "$bin" info "$tmp/long.osm"
one_line_error osm-long-attribute
expect_in osm-long-attribute "$tmp/err" "long.osm:4: an XML tag longer than"
printf '<?xml version="1.0"?>\n<osm version="0.6">\n<node id="18446744073709551617" lat="1" lon="1"/>\n</osm>\n' >"$tmp/bigid.osm"
check osm-big-id 1 "$bin" info "$tmp/bigid.osm"
one_line_error osm-big-id
expect_in osm-big-id "$tmp/err" "bigid.osm:3: <node> id 18446744073709551617 is past"

# "-" reads the graph from standard input (text, compressed, a cache)
xz -c "$g" | "$bin" sssp - -s 1 --out "$tmp/stdin.dist" >"$tmp/out" 2>"$tmp/err"
ok stdin-xz cmp -s "$tmp/stdin.dist" "$data/tiny.dist1"
"$bin" sssp - -s 1 --out "$tmp/stdin2.dist" <"$tmp/ref.wgc" >"$tmp/out" 2>"$tmp/err"
ok stdin-cache cmp -s "$tmp/stdin2.dist" "$data/tiny.dist1"
printf 'p sp 2 1\na 1 3 1\n' >"$tmp/bad-stdin.gr"
check stdin-error 1 "$bin" info - <"$tmp/bad-stdin.gr"
one_line_error stdin-error
expect_in stdin-error "$tmp/err" "<stdin>:2:"

# plots: trace names and titles with shell and gnuplot syntax stay text
if command -v gnuplot >/dev/null; then
  mkdir "$tmp/plot" && cd "$tmp/plot" || exit 1
  "$bin" gen grid --rows 20 --cols 20 -o grid.wgc -q >/dev/null
  "$bin" sssp grid.wgc --algo nearfar --delta 5 --trace base.csv -q >/dev/null
  evil1='$(touch PWNED).csv'
  evil2='a`touch PWNED`.csv'
  evil3="q'\"x_y @x.csv"
  cp base.csv "$evil1"; cp base.csv "$evil2"; cp base.csv "$evil3"
  before=$(ls -d /tmp/wattgraph-plot-* 2>/dev/null | sort)
  nl='
'
  check plot-hostile 0 "$bin" plot profile -o "p\`touch PWNED\`.png" \
    --title "T\`touch PWNED\`'\" \$(touch PWNED) @x${nl}system('touch PWNED')" \
    "$evil1" "$evil2" "$evil3"
  ok plot-hostile-nothing-ran test ! -e PWNED
  ok plot-hostile-png test "$(head -c 4 "p\`touch PWNED\`.png" | od -An -c | tr -d ' ')" = "211PNG"
  check plot-hostile-dist 0 "$bin" plot distribution -o out.svg --title "\`touch PWNED\`" "$evil2"
  ok plot-hostile-dist-nothing-ran test ! -e PWNED
  expect_in plot-hostile-svg out.svg "<svg"
  check plot-pdf 0 "$bin" plot distribution -o out.pdf base.csv
  ok plot-pdf-is-pdf test "$(head -c 4 out.pdf)" = "%PDF"
  check plot-bad-ext 2 "$bin" plot profile -o out.jpg base.csv
  one_line_error plot-bad-ext
  ok plot-bad-ext-absent test ! -e out.jpg
  head -2 base.csv >one.csv
  check plot-one-row 1 "$bin" plot profile -o one.png one.csv
  one_line_error plot-one-row
  expect_in plot-one-row "$tmp/err" "one.csv"
  awk -F, 'NR == 4 { $3 = "nan" } { print }' OFS=, base.csv >nan.csv
  check plot-nan 1 "$bin" plot profile -o nan.png nan.csv
  one_line_error plot-nan
  expect_in plot-nan "$tmp/err" "nan.csv:4"
  check plot-skip-all 1 "$bin" plot distribution --skip 100000 -o s.png base.csv
  one_line_error plot-skip-all
  cp base.csv trace.png
  check plot-out-is-trace 2 "$bin" plot profile -o trace.png trace.png
  ok plot-out-is-trace-kept cmp -s trace.png base.csv
  one_line_error plot-out-is-trace
  after=$(ls -d /tmp/wattgraph-plot-* 2>/dev/null | sort)
  ok plot-temporaries-removed test "$before" = "$after"
  cd "$tmp" || exit 1
fi

cli_check_done "cli hostile"
