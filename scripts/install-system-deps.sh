#!/usr/bin/env bash
# One-time system set-up for Quire on Debian/Ubuntu: LibreOffice (headless, no GUI: Writer, Impress,
# Calc for spreadsheets, Draw for drawings), fonts for faithful conversion, poppler-utils, Tesseract
# with its language data (OCR of pages without text), bubblewrap (the converters' sandbox), and
# Chromium for the browser tests (its headless shell, which they run, and the full browser).
# Idempotent: packages already present are left alone, and apt is only called when something is missing.
set -euo pipefail

packages=(
  libreoffice-writer-nogui
  libreoffice-impress-nogui
  libreoffice-calc-nogui
  libreoffice-draw-nogui
  python3-uno
  poppler-utils
  tesseract-ocr
  tesseract-ocr-osd
  tesseract-ocr-eng
  tesseract-ocr-deu
  tesseract-ocr-fra
  tesseract-ocr-spa
  tesseract-ocr-ita
  tesseract-ocr-por
  bubblewrap
  fonts-dejavu
  fonts-liberation2
  fonts-crosextra-carlito
  fonts-crosextra-caladea
  fonts-noto-core
  fonts-noto-cjk
  chromium
  chromium-headless-shell
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-system-deps: all system packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-system-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
