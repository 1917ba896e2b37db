#!/usr/bin/env bash
# Build the wheel, install it as a user would (uv tool install), and run it on a copy of the sample corpus:
# headless search, then the explorer in a real terminal (tmux, 80x24). Everything lives in a temporary
# folder that is removed at the end; the user's own tools, cache and PATH are left alone.
#
# Usage: bash scripts/check_wheel.sh
set -euo pipefail
cd "$(dirname "$0")/.."

work="$(mktemp -d -t raglens-wheel-XXXXXX)"
session="raglens-wheel-$$"
cleanup() {
  tmux kill-session -t "$session" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

export UV_TOOL_DIR="$work/tools" UV_TOOL_BIN_DIR="$work/bin" RAGLENS_CACHE_DIR="$work/cache"
uv build --wheel --out-dir "$work/dist" >/dev/null
wheel="$(ls "$work"/dist/*.whl)"
echo "built $(basename "$wheel")"
uv tool install --quiet "$wheel"
raglens="$UV_TOOL_BIN_DIR/raglens"
echo "installed: $("$raglens" --version 2>/dev/null || echo "raglens (no --version)")"

cp -r sample_corpus "$work/corpus"
"$raglens" search "$work/corpus" "what happens after a job is acknowledged?" --json -q > "$work/search.json"
python3 - "$work/search.json" <<'PY'
import json, sys
document = json.load(open(sys.argv[1]))
top = document["hits"][0]
assert top["path"] == "docs/queues.md", top["path"]
print(f"headless search: top hit {top['path']}:L{top['line_start']}-L{top['line_end']} ({top['score']:.3f})")
PY

tmux new-session -d -s "$session" -x 80 -y 24 \
  "$raglens '$work/corpus' 'what happens after a job is acknowledged?'; echo \"exit \$?\" > '$work/exit'; sleep 30"
for _ in $(seq 1 120); do
  if tmux capture-pane -t "$session" -p | grep -q "docs/queues.md"; then break; fi
  sleep 0.5
done
tmux capture-pane -t "$session" -p | grep -q "docs/queues.md" || { tmux capture-pane -t "$session" -p; exit 1; }
echo "explorer: hits drawn in a terminal of 80x24"
tmux send-keys -t "$session" Escape
sleep 0.5  # apart: an escape followed at once by q reads as alt+q
tmux send-keys -t "$session" q
for _ in $(seq 1 40); do [ -s "$work/exit" ] && break; sleep 0.25; done
grep -qx "exit 0" "$work/exit" || { echo "the explorer did not quit cleanly: $(cat "$work/exit" 2>/dev/null)"; exit 1; }
echo "explorer: q quit it, exit 0"
uv tool uninstall "$(basename "$wheel" | cut -d- -f1 | tr _ -)" >/dev/null
echo "wheel check passed"
