# shellcheck shell=bash
# How far a long step is, for Scripts/demo and Scripts/test (sourced, not run):
#
#   source Scripts/lib/progress.sh
#   progress_run build "release build" .build-logs/demo-build.log bash Scripts/build-release
#
# progress_run KIND LABEL LOG COMMAND... runs COMMAND with its output (stdout and stderr) in
# LOG and returns its exit status. It says where LOG is when it starts, and while COMMAND
# runs it shows how far it is:
#   build  the build's own counter and what it compiles: "[812/1874] Compiling NIOPosix …"
#          (before it, SwiftPM's fetching and resolving lines)
#   apt    apt-get's own lines, counted: "[12/57] Unpacking libwebkit2gtk-4.1-0 …"
#   test   swift test: its output still goes to stdout as well; the count of tests that
#          ended, of those the run holds (PROGRESS_EVENTS: its event stream, when given)
# On a terminal the status is one line, rewritten in place (\r) and cut to the terminal's
# width; elsewhere (a CI log) it is a plain line every PROGRESS_INTERVAL seconds (30 by
# default). The end is one line: done and how long it took (for `test`, how many tests
# ended), or failed, its exit status and where LOG is, then the log's error lines and its
# last lines (on a terminal, or with PROGRESS_EXCERPT=1), or the whole log (elsewhere: a CI
# log is all there is).
#
# Settings (variables): PROGRESS_PREFIX starts every line (Scripts/demo: four spaces),
# PROGRESS_FD is where the status goes (1 or 2; default 1), PROGRESS_INTERVAL and
# PROGRESS_EXCERPT as above.
# COMMAND is a program, not a shell function: it runs in a pipeline, so a function would
# run with `set -e` off. Interrupted (Ctrl-C), COMMAND gets the signal too: it runs in the
# foreground.

# "45 s", "3 min 12 s".
progress_duration() {
  local text
  _progress_duration text "$1"
  printf '%s' "$text"
}

# The same into the variable VAR, without a subshell (the status line is drawn often).
_progress_duration() {
  if [ "$2" -lt 60 ]; then
    printf -v "$1" '%d s' "$2"
  else
    printf -v "$1" '%d min %d s' $(($2 / 60)) $(($2 % 60))
  fi
}

progress_run() {
  local kind=$1 label=$2 log=$3
  shift 3
  case "$kind" in
    build | apt | test) ;;
    *) echo "progress_run: kind $kind is not build, apt or test" >&2; return 64 ;;
  esac
  mkdir -p "$(dirname "$log")"
  : >"$log"
  local fd=${PROGRESS_FD:-1} began=$SECONDS status last took tally=""
  printf '%s%s (full log: %s)\n' "${PROGRESS_PREFIX:-}" "$label" "$log" >&"$fd"
  # The follower runs in a subshell: its last status comes back through a file. It stops at
  # the line that says COMMAND ended, not at the end of the pipe: a process COMMAND left
  # running (a server a test started) may hold the pipe open for good.
  last=$(mktemp)
  local end="progress_run: the command ended $$.$RANDOM"
  if { code=0; "$@" || code=$?; printf '%s %s\n' "$end" "$code"; exit "$code"; } 2>&1 |
    _progress_follow "$kind" "$label" "$log" "$last" "$end"; then
    status=${PIPESTATUS[0]}
  else
    status=${PIPESTATUS[0]}
  fi
  [ "$kind" != test ] || tally=" ($(cat "$last"))"
  rm -f "$last"
  _progress_duration took $((SECONDS - began))
  if [ "$status" = 0 ]; then
    printf '%s%s: done in %s%s\n' "${PROGRESS_PREFIX:-}" "$label" "$took" "$tally" >&"$fd"
    return 0
  fi
  printf '%s%s: FAILED (exit %s) after %s%s; full log: %s\n' "${PROGRESS_PREFIX:-}" "$label" "$status" "$took" "$tally" "$log" >&"$fd"
  if [ "$kind" != test ]; then
    if [ -t "$fd" ] || [ "${PROGRESS_EXCERPT:-0}" = 1 ]; then
      if grep -qE '(^|: )(error|E):? ' "$log"; then
        printf '%s  its errors:\n' "${PROGRESS_PREFIX:-}" >&"$fd"
        grep -E -A3 '(^|: )(error|E):? ' "$log" | head -n 60 | sed "s/^/${PROGRESS_PREFIX:-}  /" >&"$fd"
      fi
      printf '%s  its last lines:\n' "${PROGRESS_PREFIX:-}" >&"$fd"
      tail -n 15 "$log" | sed "s/^/${PROGRESS_PREFIX:-}  /" >&"$fd"
    else
      sed "s/^/${PROGRESS_PREFIX:-}  | /" "$log" >&"$fd"
    fi
  fi
  return "$status"
}

# Reads COMMAND's output, up to the line that starts with END: into LOG, to stdout too for
# `test`, and the status to PROGRESS_FD; the last status into the file LAST.
_progress_follow() {
  local kind=$1 label=$2 log=$3 last=$4 end=$5 fd=${PROGRESS_FD:-1} prefix=${PROGRESS_PREFIX:-}
  local interval=${PROGRESS_INTERVAL:-30} tty=0 width=0
  if [ -t "$fd" ]; then
    tty=1
    width=${COLUMNS:-$(tput cols 2>/dev/null || echo 80)}
  fi
  exec 3>>"$log"
  local began=$SECONDS printed=$SECONDS drawn=0 shown=0 status="starting" line more=1
  [ "$kind" != build ] || status="reading the package manifests"
  # build: the counter; apt: packages to install, and how many got through each phase;
  # test: tests ended and failed, and how many the run holds.
  local counter="" doing="" total=0 counted=0 got=0 unpacked=0 setup=0 ended=0 failed=0
  local now pending="" got_line text took
  # apt-get's lines: "Get:12 http://… bookworm/main amd64 PACKAGE ARCH VERSION [SIZE]",
  # "Unpacking PACKAGE (VERSION) …", "Setting up PACKAGE (VERSION) …".
  local apt_get='^Get:([0-9]+) .* ([^ ]+) [^ ]+ [^ ]+ \[' apt_unpack='^Unpacking ([^ ]+)' apt_setup='^Setting up ([^ ]+)'
  while [ "$more" = 1 ]; do
    # A line, or nothing after a second (the clock goes on), or the end. What a timed-out
    # read got of a line waits for the rest.
    line=""
    got_line=0
    if IFS= read -r -t 1 line; then
      got_line=1
    elif [ $? -gt 128 ]; then
      pending+=$line
      # SwiftPM says it waits for another build without ending the line.
      [ "$kind" = apt ] || [[ "$pending" != *"Another instance of SwiftPM"* ]] ||
        status="waiting for another build of this folder to end"
    else
      more=0
      [ -z "$pending$line" ] || got_line=1
    fi
    if [ "$got_line" = 1 ]; then
      line=$pending$line
      pending=""
      if [[ "$line" == *"$end "* ]]; then
        more=0
        line=${line%%"$end "*}
        [ -n "$line" ] || continue
      fi
      printf '%s\n' "$line" >&3
      if [ "$kind" = test ]; then
        if [ "$shown" = 1 ]; then printf '\r\033[K' >&"$fd"; shown=0; fi
        printf '%s\n' "$line"
      fi
      line=${line%$'\r'}
      case "$kind" in
        build)
          if [[ "$line" =~ ^\[([0-9]+/[0-9]+)\]\ (.*)$ ]]; then
            counter="[${BASH_REMATCH[1]}]"
            doing=${BASH_REMATCH[2]}
          elif [[ "$line" == *"Another instance of SwiftPM"* ]]; then
            doing="waiting for another build of this folder to end"
          elif [ -z "$counter" ] && [ -n "$line" ] && [[ "$line" != warning:* ]] && [[ "$line" != " "* ]]; then
            doing=$line  # fetching and resolving the dependencies
          fi
          status="${counter:+$counter }${doing:-$status}"
          ;;
        apt)
          if [[ "$line" =~ ^([0-9]+)\ upgraded,\ ([0-9]+)\ newly\ installed,\ (([0-9]+)\ reinstalled,\ )? ]]; then
            total=$((BASH_REMATCH[1] + BASH_REMATCH[2] + ${BASH_REMATCH[4]:-0}))
            status="$line"
          elif [ "$total" != 0 ] && [[ "$line" =~ $apt_get ]]; then
            got=${BASH_REMATCH[1]}
            status="downloading [$got/$total] ${BASH_REMATCH[2]}"
          elif [[ "$line" =~ $apt_unpack ]]; then
            unpacked=$((unpacked + 1))
            status="unpacking [$unpacked/$total] ${BASH_REMATCH[1]}"
          elif [[ "$line" =~ $apt_setup ]]; then
            setup=$((setup + 1))
            status="setting up [$setup/$total] ${BASH_REMATCH[1]}"
          elif [[ "$line" =~ ^(Reading|Building|Hit|Get|Fetched|Processing) ]]; then
            status=$line
          fi
          ;;
        test)
          if [[ "$line" =~ \ Test\ (.*)\ (passed|failed)\ after\  ]] && [[ "$line" != *" Test run "* ]]; then
            ended=$((ended + 1))
            [ "${BASH_REMATCH[2]}" = failed ] && failed=$((failed + 1))
          elif [[ "$line" =~ \ Test\ .*\ skipped ]]; then
            ended=$((ended + 1))
          elif [[ "$line" == *"Another instance of SwiftPM"* ]]; then
            status="waiting for another build of this folder to end"
            continue
          elif [ "$ended" = 0 ] && [[ "$line" != *"Test run started"* ]]; then
            continue  # not yet running: the status stays
          fi
          # The event stream lists the run's tests before its runStarted event.
          if [ "$counted" = 0 ] && [ -n "${PROGRESS_EVENTS:-}" ] && grep -q '"kind":"runStarted"' "$PROGRESS_EVENTS" 2>/dev/null; then
            total=$(grep -c '^{"kind":"test".*"kind":"function"' "$PROGRESS_EVENTS" || true)
            counted=1
          fi
          status="$ended tests ended"
          [ "$total" = 0 ] || status="$ended of $total tests ended"
          [ "$failed" = 0 ] || status="$status, $failed failed"
          ;;
      esac
    fi
    now=$SECONDS
    if [ "$tty" = 1 ]; then
      # Redrawn when the output pauses (not between the lines of a burst): at most once a
      # second, and every second while nothing comes (the clock); at once after a test's
      # line took its place.
      if [ "$more" = 1 ] && { [ "$shown" = 0 ] || [ "$now" != "$drawn" ]; } && ! read -r -t 0; then
        _progress_duration took $((now - began))
        text="$prefix$label, $took: $status"
        [ "${#text}" -lt "$width" ] || text="${text:0:$((width - 2))}…"
        printf '\r\033[K%s' "$text" >&"$fd"
        shown=1
        drawn=$now
      fi
    elif [ $((now - printed)) -ge "$interval" ]; then
      _progress_duration took $((now - began))
      printf '%s%s, %s: %s\n' "$prefix" "$label" "$took" "$status" >&"$fd"
      printed=$now
    fi
  done
  if [ "$shown" = 1 ]; then printf '\r\033[K' >&"$fd"; fi
  exec 3>&-
  printf '%s' "$status" >"$last"
}
