# Shared by the command-line test scripts (sourced, not run): a temporary
# folder removed on exit, pass/fail counters and the checks they use. Every
# check prints "FAIL name: why" with the first lines of what it saw.
#   . "$(dirname "$0")/support/cli_check.sh"
#   ... checks ...
#   cli_check_done "route cli"     # prints the counts, exits 1 on a failure
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
pass=0

check() { # check NAME EXPECTED_STATUS COMMAND... (output in $tmp/out, $tmp/err)
  local name=$1 want=$2
  shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  if [ "$got" -ne "$want" ]; then
    echo "FAIL $name: exit $got, expected $want"
    sed 's/^/  stdout: /' "$tmp/out" | head -5
    sed 's/^/  stderr: /' "$tmp/err" | head -5
    failures=$((failures + 1))
  else
    pass=$((pass + 1))
  fi
}
ok() { # ok NAME CONDITION-COMMAND... : passes when the command succeeds
  local name=$1
  shift
  if "$@"; then pass=$((pass + 1)); else
    echo "FAIL $name: '$*' is false"
    failures=$((failures + 1))
  fi
}
expect_in() { # expect_in NAME FILE TEXT
  if ! grep -qF -- "$3" "$2"; then
    echo "FAIL $1: '$3' not in $(basename "$2"):"
    head -5 "$2" | sed 's/^/  /'
    failures=$((failures + 1))
  else
    pass=$((pass + 1))
  fi
}
expect_file() { # expect_file NAME FILE EXPECTED_TEXT
  if [ "$(cat "$2")" != "$3" ]; then
    echo "FAIL $1: $(basename "$2") is:"
    sed 's/^/  /' "$2" | head -10
    echo "  expected:"
    echo "$3" | sed 's/^/  /'
    failures=$((failures + 1))
  else
    pass=$((pass + 1))
  fi
}
same() { # same NAME FILE1 FILE2
  if ! cmp -s "$2" "$3"; then
    echo "FAIL $1: $(basename "$2") and $(basename "$3") differ"
    diff "$2" "$3" | head -5 | sed 's/^/  /'
    failures=$((failures + 1))
  else
    pass=$((pass + 1))
  fi
}
one_line_error() { # the last check's error is one line starting "wattgraph: error:"
  local lines
  lines=$(wc -l <"$tmp/err")
  if [ "$lines" -ne 1 ] || ! grep -q '^wattgraph: error: ' "$tmp/err"; then
    echo "FAIL $1: expected a one-line error, got:"
    sed 's/^/  /' "$tmp/err"
    failures=$((failures + 1))
  else
    pass=$((pass + 1))
  fi
}
cli_check_done() { # cli_check_done LABEL: the counts, then the exit status
  echo "$1: $pass checks passed, $failures failed"
  [ "$failures" -eq 0 ] && exit 0
  exit 1
}
