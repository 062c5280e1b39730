#!/usr/bin/env bash
# The planlint GitHub Action's steps, as plain shell so they can be tested
# outside GitHub (.ci/action runs them):
#   install  put planlint in $RUNNER_TEMP/planlint-bin and on $GITHUB_PATH
#   run      run planlint with GitHub annotations, the job summary and SARIF,
#            recording its exit status in $GITHUB_OUTPUT
set -euo pipefail

action_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin_dir="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/planlint-bin"
repo="planlint/planlint"

install() {
  local version="${PLANLINT_VERSION:-source}"
  mkdir -p "$bin_dir"
  if [ "$version" = "source" ]; then
    command -v go >/dev/null || { echo "::error title=planlint::version: source needs Go; run actions/setup-go first or set version to a release tag"; exit 2; }
    (cd "$action_dir" && go build -trimpath -o "$bin_dir/planlint" .)
  else
    local os arch ext=tar.gz
    case "$(uname -s)" in Linux) os=linux ;; Darwin) os=darwin ;; MINGW*|MSYS*|CYGWIN*) os=windows; ext=zip ;; *) echo "::error::unsupported OS $(uname -s)"; exit 2 ;; esac
    case "$(uname -m)" in x86_64|amd64) arch=amd64 ;; arm64|aarch64) arch=arm64 ;; *) echo "::error::unsupported CPU $(uname -m)"; exit 2 ;; esac
    local name="planlint_${version#v}_${os}_${arch}.${ext}"
    local base="https://github.com/$repo/releases/download/$version"
    local tmp
    tmp=$(mktemp -d)
    curl -fsSL -o "$tmp/$name" "$base/$name"
    curl -fsSL -o "$tmp/checksums.txt" "$base/checksums.txt"
    (cd "$tmp" && grep " $name\$" checksums.txt | sha256sum -c -)
    if [ "$ext" = zip ]; then unzip -q -o "$tmp/$name" -d "$tmp/x"; else mkdir -p "$tmp/x" && tar -xzf "$tmp/$name" -C "$tmp/x"; fi
    cp "$tmp/x/planlint"* "$bin_dir/"
  fi
  if [ -n "${GITHUB_PATH:-}" ]; then echo "$bin_dir" >> "$GITHUB_PATH"; fi
  "$bin_dir/planlint" version
}

run() {
  local command="${PLANLINT_COMMAND:-check}"
  case "$command" in check|explain) ;; *) echo "::error title=planlint::command must be check or explain, not $command"; exit 2 ;; esac
  local planlint="$bin_dir/planlint"
  [ -x "$planlint" ] || planlint=planlint
  local -a extra=(--format github)
  if [ -n "${PLANLINT_SARIF:-}" ]; then extra+=(--output "sarif=$PLANLINT_SARIF" --sarif-category "${PLANLINT_CATEGORY:-planlint}"); fi
  # The arguments are split at spaces, quotes honoured as a shell would
  # (a quoted glob stays one argument for planlint to expand); nothing in
  # them is run.
  local -a args=()
  if [ -n "${PLANLINT_ARGS:-}" ]; then mapfile -d '' args < <(printf '%s' "$PLANLINT_ARGS" | xargs printf '%s\0'); fi
  local code=0
  "$planlint" "$command" "${extra[@]}" "${args[@]}" || code=$?
  if [ -n "${GITHUB_OUTPUT:-}" ]; then echo "exit-code=$code" >> "$GITHUB_OUTPUT"; fi
  echo "planlint exited with $code"
}

case "${1:-}" in
  install) install ;;
  run) run ;;
  *) echo "usage: $0 install|run" >&2; exit 2 ;;
esac
