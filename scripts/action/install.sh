#!/usr/bin/env bash
# The GitHub Action's install step (action.yml): puts `stridelint` on PATH.
#
# 1. Resolves the version: INPUT_VERSION (`0.1.0`, `v0.1.0` or `latest`), or, when
#    empty, the version in the action's own Cargo.toml (the release the action's tag
#    belongs to). `source` skips the download and builds the action's checkout.
# 2. Downloads the release archive for the runner (RUNNER_OS / RUNNER_ARCH) and its
#    `.sha256`, verifies the checksum and unpacks the binary. A checksum that does not
#    match fails the step; it is never "fixed" by building instead.
# 3. Falls back to `cargo install --locked` when there is no archive for this runner or
#    the download fails: from the action's checkout (`--path`) for its own version,
#    `latest` and `source`, else from the repository at tag `vVERSION` (`--git`).
#
# Writes `version`, `method` (`release` or `cargo`) and `bin` to GITHUB_OUTPUT and the
# binary's directory to GITHUB_PATH. STRIDELINT_RELEASE_BASE_URL (default: this
# repository's GitHub releases) lets a mirror, or the tests, serve the archives; file://
# URLs work.
set -euo pipefail

action_path=${GITHUB_ACTION_PATH:?GITHUB_ACTION_PATH is not set}
install_root="${RUNNER_TEMP:?RUNNER_TEMP is not set}/stridelint"
base_url=${STRIDELINT_RELEASE_BASE_URL:-https://github.com/stridelint/stridelint/releases}

note() { echo "stridelint: $*" >&2; }

checkout_version() {
    # The `version = "…"` of the [package] table (the first `version` key in Cargo.toml).
    sed -n 's/^version *= *"\([^"]*\)".*/\1/p' "$action_path/Cargo.toml" | head -n 1
}

# The Rust target of the release archive for this runner, or nothing.
runner_target() {
    case "${RUNNER_OS:-}/${RUNNER_ARCH:-}" in
        Linux/X64) echo x86_64-unknown-linux-gnu ;;
        Linux/ARM64) echo aarch64-unknown-linux-gnu ;;
        macOS/X64) echo x86_64-apple-darwin ;;
        macOS/ARM64) echo aarch64-apple-darwin ;;
        Windows/X64) echo x86_64-pc-windows-msvc ;;
        *) ;;
    esac
}

sha256_of() {
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum "$1" | cut -d ' ' -f 1
    else
        shasum -a 256 "$1" | cut -d ' ' -f 1
    fi
}

download() { # URL FILE
    curl --fail --silent --show-error --location --retry 3 --output "$2" "$1"
}

# Downloads, verifies and unpacks the archive; returns 1 (to fall back) only when the
# archive cannot be had, and exits when it is not what the checksum says.
install_release() { # VERSION TARGET
    local version=$1 target=$2 ext=tar.gz exe=stridelint
    if [ "$target" = x86_64-pc-windows-msvc ]; then
        ext=zip
        exe=stridelint.exe
    fi
    local archive="stridelint-$target.$ext" url
    if [ "$version" = latest ]; then
        url="$base_url/latest/download/$archive"
    else
        url="$base_url/download/v$version/$archive"
    fi
    local dir
    dir=$(mktemp -d "${RUNNER_TEMP}/stridelint-download.XXXXXX")
    if ! download "$url" "$dir/$archive" || ! download "$url.sha256" "$dir/$archive.sha256"; then
        note "no release archive at $url"
        rm -rf "$dir"
        return 1
    fi
    local expected actual
    expected=$(cut -d ' ' -f 1 <"$dir/$archive.sha256" | tr -d '\r\n' | tr 'A-F' 'a-f')
    actual=$(sha256_of "$dir/$archive")
    if [ -z "$expected" ] || [ "$expected" != "$actual" ]; then
        echo "::error title=stridelint::checksum mismatch for $archive: expected '$expected', got '$actual'"
        exit 1
    fi
    rm -rf "$install_root"
    mkdir -p "$install_root/bin"
    if [ "$ext" = zip ]; then
        if command -v unzip >/dev/null 2>&1; then
            unzip -q -o "$dir/$archive" -d "$dir/unpacked"
        elif command -v 7z >/dev/null 2>&1; then
            7z x -y -o"$dir/unpacked" "$dir/$archive" >/dev/null
        else
            pwsh -NoProfile -Command "Expand-Archive -Force -Path '$dir/$archive' -DestinationPath '$dir/unpacked'"
        fi
    else
        mkdir -p "$dir/unpacked"
        tar -xzf "$dir/$archive" -C "$dir/unpacked"
    fi
    local found
    found=$(find "$dir/unpacked" -type f -name "$exe" | head -n 1)
    if [ -z "$found" ]; then
        echo "::error title=stridelint::$archive holds no $exe"
        exit 1
    fi
    mv "$found" "$install_root/bin/$exe"
    chmod +x "$install_root/bin/$exe"
    rm -rf "$dir"
    note "installed stridelint $version ($target, sha256 $actual)"
}

install_cargo() { # VERSION
    local version=$1
    if ! command -v cargo >/dev/null 2>&1; then
        echo "::error title=stridelint::no release archive for ${RUNNER_OS:-?}/${RUNNER_ARCH:-?} and no cargo to build one"
        exit 1
    fi
    if [ -x "$install_root/bin/stridelint" ]; then
        note "using the cached cargo build in $install_root"
        return 0
    fi
    if [ "$version" = source ] || [ "$version" = "$(checkout_version)" ] || [ "$version" = latest ]; then
        note "building the action's checkout with cargo install --locked"
        cargo install --locked --path "$action_path" --root "$install_root"
    else
        note "building stridelint $version (tag v$version) with cargo install --locked"
        cargo install --locked --git "${STRIDELINT_GIT_URL:-https://github.com/stridelint/stridelint}" \
            --tag "v$version" --root "$install_root" stridelint
    fi
}

version=${INPUT_VERSION:-}
version=${version#v}
if [ -z "$version" ]; then
    version=$(checkout_version)
fi

method=cargo
target=$(runner_target)
if [ "$version" != source ] && [ -n "$target" ] && install_release "$version" "$target"; then
    method=release
else
    [ -z "$target" ] && note "no release archive is built for ${RUNNER_OS:-?}/${RUNNER_ARCH:-?}"
    install_cargo "$version"
fi

{
    echo "version=$version"
    echo "method=$method"
    echo "bin=$install_root/bin"
} >>"${GITHUB_OUTPUT:-/dev/null}"
echo "$install_root/bin" >>"${GITHUB_PATH:-/dev/null}"
"$install_root/bin/stridelint" --version >&2
