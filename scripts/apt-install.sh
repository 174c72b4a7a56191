# Sourced by scripts/setup.sh and scripts/setup-wasm.sh: ensure_packages LABEL WHAT PACKAGE...
# installs the Debian packages that are missing (apt-get only then; sudo when not root).
ensure_packages() {
  local label=$1 what=$2
  shift 2
  local missing=() p
  for p in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$p")
    fi
  done
  if ((${#missing[@]})); then
    echo "$label: installing ${missing[*]}"
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
  else
    echo "$label: all $what dependencies present"
  fi
}
