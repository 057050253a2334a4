#!/usr/bin/env bash
# wattgraph --tuning: the listing, its sources (default, env, env-rejected
# with a warning saying why), --json, --markdown (docs/tuning.md's table),
# --help and a bad flag; the common --memory-limit flag and allreduce's
# --nccl-library (the options that replaced reading the environment).
set -u
bin=${WG_BIN:?WG_BIN not set (run through ctest)}
repo=${WG_REPO:-$(cd "$(dirname "$0")/.." && pwd)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
no() { echo "FAIL: $*"; fail=1; }

env -u WG_CUDA_SGRID "$bin" --tuning >"$tmp/out" 2>"$tmp/err" || no "--tuning exit $?"
grep -qE '^WG_CUDA_SGRID +4 +4 +default +docs/nearfar-cuda.md$' "$tmp/out" || no "default row: $(grep SGRID "$tmp/out")"
[ -s "$tmp/err" ] && no "warnings without a bad variable: $(cat "$tmp/err")"

WG_CUDA_SGRID=8 WG_CUDA_ENGINE=async "$bin" --tuning >"$tmp/out" 2>"$tmp/err" || no "exit $?"
grep -qE '^WG_CUDA_SGRID +8 +4 +env ' "$tmp/out" || no "env row: $(grep SGRID "$tmp/out")"
grep -qE '^WG_CUDA_ENGINE +async +auto +env ' "$tmp/out" || no "env choice: $(grep ENGINE "$tmp/out")"

WG_CUDA_SGRID=99 WG_FIT_TIES=short1 "$bin" --tuning >"$tmp/out" 2>"$tmp/err" || no "exit $?"
grep -qE '^WG_CUDA_SGRID +4 +4 +env-rejected ' "$tmp/out" || no "rejected row: $(grep SGRID "$tmp/out")"
grep -qF 'WG_CUDA_SGRID=99: out of range (1..64)' "$tmp/err" || no "warning: $(cat "$tmp/err")"
grep -qF 'WG_FIT_TIES="short1": shortK needs K in 2..1024' "$tmp/err" || no "ties warning: $(cat "$tmp/err")"

# a removed switch is named as removed, not ignored in silence
WG_CUDA_SYNC=1 "$bin" --tuning >"$tmp/out" 2>"$tmp/err" || no "--tuning with a removed switch: exit $?"
grep -qF 'WG_CUDA_SYNC was removed' "$tmp/err" || no "removed switch warning: $(cat "$tmp/err")"
WG_CUDA_SYNC=1 "$bin" --tuning -q >"$tmp/out" 2>"$tmp/err"
grep -q 'WG_CUDA_SYNC' "$tmp/err" && no "-q should silence the removed-switch warning"

# every command warns about a refused variable, and runs on
data=${WG_TEST_DATA:-$repo/tests/data}
g=$(ls "$data"/*.gr 2>/dev/null | head -1)
if [ -n "$g" ]; then
  WG_CUDA_ASYNC_CLAIM=fast "$bin" info "$g" >"$tmp/out" 2>"$tmp/err" || no "info with a refused variable: exit $?"
  grep -qF 'WG_CUDA_ASYNC_CLAIM="fast": not one of ticket|cas' "$tmp/err" || no "info's warning: $(cat "$tmp/err")"
  WG_CUDA_ASYNC_CLAIM=fast "$bin" info "$g" -q >"$tmp/out" 2>"$tmp/err"
  grep -q 'WG_CUDA_ASYNC_CLAIM' "$tmp/err" && no "-q should silence the warning"
fi

"$bin" --tuning --json >"$tmp/json" || no "--json exit $?"
[ "$(wc -l <"$tmp/json")" -eq 1 ] || no "--json is not one line"
n=$(grep -o '"name":' "$tmp/json" | wc -l)
rows=$("$bin" --tuning | grep -c '^WG_')
[ "$n" -eq "$rows" ] && [ "$n" -ge 30 ] || no "--json has $n switches, the table $rows"

"$bin" --tuning --markdown >"$tmp/md" || no "--markdown exit $?"
sed -n '/^<!-- BEGIN tuning table/,/^<!-- END tuning table/p' "$repo/docs/tuning.md" | sed '1d;$d' >"$tmp/doc"
diff -u "$tmp/doc" "$tmp/md" >"$tmp/diff" || no "docs/tuning.md differs from --markdown: $(head -5 "$tmp/diff")"

# --memory-limit MB (beside --threads): the flag, the variable as its
# fallback, the flag winning over the variable, its range and its --help line
"$bin" gen grid --rows 600 --cols 600 -o "$tmp/grid.gr" -q || no "gen exit $?"
env -u WG_MEMORY_LIMIT_MB "$bin" info "$tmp/grid.gr" -q >"$tmp/out" || no "info without a limit: exit $?"
env -u WG_MEMORY_LIMIT_MB "$bin" info "$tmp/grid.gr" -q --memory-limit 1 >"$tmp/out" 2>"$tmp/err"
[ $? -eq 1 ] || no "--memory-limit 1 on a 360,000-vertex grid should exit 1"
grep -qF 'over the memory limit of 1.0 MB' "$tmp/err" || no "--memory-limit's error: $(cat "$tmp/err")"
WG_MEMORY_LIMIT_MB=1 "$bin" info "$tmp/grid.gr" -q >"$tmp/out" 2>"$tmp/err"
[ $? -eq 1 ] || no "WG_MEMORY_LIMIT_MB=1 should exit 1"
grep -qF 'over the memory limit of 1.0 MB' "$tmp/err" || no "the variable's error: $(cat "$tmp/err")"
WG_MEMORY_LIMIT_MB=1 "$bin" info "$tmp/grid.gr" -q --memory-limit 100 >"$tmp/out" 2>"$tmp/err" ||
  no "--memory-limit 100 should win over WG_MEMORY_LIMIT_MB=1: $(cat "$tmp/err")"
"$bin" info "$tmp/grid.gr" -q --memory-limit 0 >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] || no "--memory-limit 0 should exit 2"
grep -qF -- '--memory-limit expects a whole number in [1, 1099511627776]' "$tmp/err" || no "range error: $(cat "$tmp/err")"
for c in info sssp gen convert; do
  "$bin" $c --help | grep -q -- '--memory-limit MB' || no "$c --help lacks --memory-limit"
done

# allreduce --nccl-library PATH: --help has it; a path that cannot be read
# is a usage error naming it (exit 2), checked before any GPU is looked for
"$bin" allreduce --help | grep -q -- '--nccl-library PATH' || no "allreduce --help lacks --nccl-library"
"$bin" allreduce --nccl-library "$tmp/no-such/libnccl.so.2" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] || no "--nccl-library with a missing file should exit 2"
grep -qF -- "--nccl-library '$tmp/no-such/libnccl.so.2': No such file or directory" "$tmp/err" ||
  no "--nccl-library's error: $(cat "$tmp/err")"
"$bin" allreduce --nccl-library "" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] || no "an empty --nccl-library should exit 2"

"$bin" --tuning --help >"$tmp/help" || no "--help exit $?"
grep -q 'markdown' "$tmp/help" || no "--help lacks --markdown"
"$bin" --tuning --bogus >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] || no "a bad flag should exit 2"
"$bin" --help | grep -q -- '--tuning' || no "wattgraph --help lacks --tuning"

[ $fail -eq 0 ] && echo "PASS: wattgraph --tuning"
exit $fail
