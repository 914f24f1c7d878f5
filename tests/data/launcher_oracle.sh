# usage: cd <checkout>; ( export VARS...; source oracle.sh launcher 3>out )   (fd 3: where the script is
# written; in a subshell of its own, so one bash runs a launcher for many sets of variables)
# Runs the launcher with only assignments, tests and printf/echo executing; every other command is
# skipped (inside $( ) it prints a marker: its output is unknown). The first command that runs
# `bash benchmarks/...` (directly, through exec, srun, docker, $( )) is written to fd 3 and the
# (sub)shell that sourced this file stops. A launcher that ends (or exits) without one writes `-`:
# nothing written at all means bash did not get through the launcher.
__launcher="$1"; shift
__pid=$BASHPID; __base=$BASH_SUBSHELL  # the shell the launcher runs in, and its depth: $( ) is deeper
shopt -s extdebug
set -T
__allow() {
  local c="$BASH_COMMAND"
  case "$c" in
    "__end") printf -- '-\n' >&3; return 1;;
    __*|'source "$__launcher"') return 0;;
    "printf "*|"echo "*) (( BASH_SUBSHELL > __base )) && return 0; return 1;;  # only what $( ) captures
    "exit"*) (( BASH_SUBSHELL == __base )) && { printf -- '-\n' >&3; kill -KILL $__pid; }; return 0;;  # the launcher ends here
    "[["*|"[ "*|"test "*|"export "*|"local "*|"true"|"false") return 0;;
  esac
  if [[ "$c" =~ ^[A-Za-z_][A-Za-z_0-9]*= ]]; then return 0; fi
  if [[ "$c" == *bash* ]]; then
    local -a __w
    eval "__w=( ${c//$'\n'/ } )" 2>/dev/null
    local i e=0
    [[ " ${__w[*]} " == *" --entrypoint="*bash" "* ]] && e=1
    for ((i = 0; i < ${#__w[@]} - 1; i++)); do
      if [[ ( "${__w[i]}" == bash || "${__w[i]}" == /bin/bash || $e == 1 ) && "${__w[i+1]}" == *benchmarks/*.sh ]]; then
        printf '%s\n' "${__w[i+1]}" >&3
        kill -KILL $__pid
      fi
    done
  fi
  if (( BASH_SUBSHELL > __base )); then printf '__UNKNOWN__'; fi
  return 1
}
trap '__allow' DEBUG
source "$__launcher"
__end
