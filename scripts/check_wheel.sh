#!/usr/bin/env bash
# Build the wheel, install it as a user would (uv tool install), and run it on a copy of the sample corpus:
# headless search, then the explorer in a real terminal (tmux, 80x24). Everything it writes (the tool and
# its dependencies, a few GB; the vector cache; the logs) lives in one temporary folder, removed at the
# end; the tmux server is a private one, so the user's own sessions, tools, cache and PATH are left alone.
#
# Usage: bash scripts/check_wheel.sh
set -euo pipefail
cd "$(dirname "$0")/.."

for needed in uv tmux python3; do
  command -v "$needed" >/dev/null 2>&1 || { echo "check_wheel: $needed is needed and not on PATH" >&2; exit 2; }
done

work="$(mktemp -d -t raglens-wheel-XXXXXX)"
socket="raglens-wheel-$$"
cleanup() {
  tmux -L "$socket" kill-server 2>/dev/null || true
  sleep 0.5  # the explorer ends on the hang-up; let it go before its folder does
  rm -rf "$work"
}
trap cleanup EXIT

export UV_TOOL_DIR="$work/tools" UV_TOOL_BIN_DIR="$work/bin"
export RAGLENS_CACHE_DIR="$work/cache" XDG_STATE_HOME="$work/state" XDG_DATA_HOME="$work/data"
uv build --wheel --out-dir "$work/dist" >/dev/null
wheel="$(ls "$work"/dist/*.whl)"
echo "built $(basename "$wheel")"
uv tool install --quiet "$wheel"
raglens="$UV_TOOL_BIN_DIR/raglens"
echo "installed: $("$raglens" --version)"

cp -r sample_corpus "$work/corpus"
"$raglens" search "$work/corpus" "what happens after a job is acknowledged?" --json -q > "$work/search.json"
python3 - "$work/search.json" <<'PY'
import json, sys
document = json.load(open(sys.argv[1]))
top = document["hits"][0]
assert top["path"] == "docs/queues.md", top["path"]
print(f"headless search: top hit {top['path']}:L{top['line_start']}-L{top['line_end']} ({top['score']:.3f})")
PY

# A private server (-L) started with no configuration (-f): it has this script's environment.
tmux -L "$socket" -f /dev/null new-session -d -s check -x 80 -y 24 \
  "'$raglens' '$work/corpus' 'what happens after a job is acknowledged?'; echo \"exit \$?\" > '$work/exit'"
tmux -L "$socket" set-option -t check remain-on-exit on >/dev/null
shown() { tmux -L "$socket" capture-pane -t check -p 2>/dev/null || true; }
for _ in $(seq 1 120); do
  if shown | grep -q "docs/queues.md" || [ -s "$work/exit" ]; then break; fi
  sleep 0.5
done
if ! shown | grep -q "docs/queues.md"; then
  echo "the explorer drew no hits ($(cat "$work/exit" 2>/dev/null || echo "still running")); its screen:"
  shown
  exit 1
fi
echo "explorer: hits drawn in a terminal of 80x24"
tmux -L "$socket" send-keys -t check Escape
sleep 0.5  # apart: an escape followed at once by q reads as alt+q
tmux -L "$socket" send-keys -t check q
for _ in $(seq 1 40); do [ -s "$work/exit" ] && break; sleep 0.25; done
grep -qx "exit 0" "$work/exit" 2>/dev/null || { echo "the explorer did not quit cleanly: $(cat "$work/exit" 2>/dev/null)"; shown; exit 1; }
echo "explorer: q quit it, exit 0"
echo "wheel check passed"
