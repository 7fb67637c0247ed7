//! Finding CUDA without ever crashing: library preflight, NVRTC preloading, and a panic net.
//!
//! cudarc loads `libcuda` and `libnvrtc` lazily and *panics* when a library or a symbol is
//! missing (`../shared/spec/cuda-engine.md` §1.2). The verify engine must instead answer with a
//! one-line reason, so every first contact with CUDA goes through three layers:
//!
//! 1. [`check_driver_library`] and [`check_nvrtc`]: cudarc's own `is_culib_present()` walks
//!    the library names without initialising anything and cannot panic;
//! 2. [`preload_nvrtc`]: NVRTC is often installed by pip (`nvidia-cuda-nvrtc`) in a
//!    `site-packages/nvidia/cu13/lib` directory that is not on the loader path. Loading it
//!    once by absolute path makes glibc hand the same object to cudarc's later by-name
//!    `dlopen` (objects are matched by SONAME), with no `LD_LIBRARY_PATH` needed;
//! 3. [`quietly`]: runs the first real calls under `catch_unwind` with the panic hook
//!    silenced, for the cases the preflight cannot see (a library present but a symbol
//!    missing).

use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

use crate::verify::error::VerifyError;

/// Environment variable naming NVRTC explicitly: the library file or its directory.
pub const NVRTC_ENV: &str = "STRIDELINT_NVRTC";

/// NVRTC sonames, newest first (cudarc's `cuda-13000` bindings accept both).
const NVRTC_SONAMES: [&str; 2] = ["libnvrtc.so.13", "libnvrtc.so.12"];

/// Fails with a one-line reason when the driver library cannot be loaded.
pub fn check_driver_library() -> Result<(), VerifyError> {
    // SAFETY: is_culib_present only dlopens candidate names and drops the handles.
    if unsafe { cudarc::driver::sys::is_culib_present() } {
        Ok(())
    } else {
        Err(VerifyError::CudaUnavailable(
            "no NVIDIA driver library (libcuda.so.1) on this machine".to_string(),
        ))
    }
}

/// Fails with a one-line reason when NVRTC cannot be loaded, after looking for a
/// pip-installed one (see [`preload_nvrtc`]).
pub fn check_nvrtc() -> Result<(), VerifyError> {
    preload_nvrtc(&[]);
    // SAFETY: as above.
    if unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        Ok(())
    } else {
        Err(VerifyError::CudaUnavailable(format!(
            "NVRTC (libnvrtc.so.13) not found; `pip install nvidia-cuda-nvrtc` or set {NVRTC_ENV} to its lib directory"
        )))
    }
}

/// Makes NVRTC loadable by cudarc if it is not already: looks in `$STRIDELINT_NVRTC`, in
/// `extra_dirs`, in pip's `nvidia/cu13/lib` (and CUDA 12's `nvidia/cuda_nvrtc/lib`) under
/// every `site-packages` of `$VIRTUAL_ENV` and of `python3`'s `sys.path`, and in the usual
/// CUDA toolkit directories; loads the first hit (after its `libnvrtc-builtins`, which NVRTC
/// itself opens during compilation) and keeps it loaded for the life of the process.
/// Returns the library loaded, `None` when NVRTC was already loadable or nothing was found.
pub fn preload_nvrtc(extra_dirs: &[PathBuf]) -> Option<PathBuf> {
    static LOADED: Mutex<Vec<libloading::Library>> = Mutex::new(Vec::new());
    // Held while probing too, so that concurrent callers load the library once.
    let mut loaded = LOADED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    // SAFETY: is_culib_present only dlopens candidate names and drops the handles.
    if unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return None;
    }
    let library = nvrtc_candidates(extra_dirs)
        .into_iter()
        .find(|path| path.is_file())?;
    if let Some(builtins) = library.parent().and_then(find_builtins) {
        // SAFETY: loading NVRTC's builtins runs no initialisers with preconditions.
        if let Ok(handle) = unsafe { libloading::Library::new(&builtins) } {
            loaded.push(handle);
        }
    }
    // SAFETY: as above; the handle is kept so the library stays mapped.
    let handle = unsafe { libloading::Library::new(&library) }.ok()?;
    loaded.push(handle);
    Some(library)
}

/// Every path where an NVRTC library may be, most explicit first.
fn nvrtc_candidates(extra_dirs: &[PathBuf]) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(explicit) = std::env::var_os(NVRTC_ENV).map(PathBuf::from) {
        if explicit.is_file() {
            return vec![explicit];
        }
        dirs.push(explicit);
    }
    dirs.extend(extra_dirs.iter().cloned());
    for site in python_site_dirs() {
        dirs.push(site.join("nvidia/cu13/lib"));
        dirs.push(site.join("nvidia/cuda_nvrtc/lib"));
    }
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(root) = std::env::var_os(var) {
            dirs.push(Path::new(&root).join("lib64"));
        }
    }
    dirs.push(PathBuf::from("/usr/local/cuda/lib64"));
    dirs.iter()
        .flat_map(|dir| NVRTC_SONAMES.iter().map(move |name| dir.join(name)))
        .collect()
}

/// `site-packages` directories of the active virtualenv and of `python3` (asked once).
fn python_site_dirs() -> Vec<PathBuf> {
    static FROM_PYTHON: OnceLock<Vec<PathBuf>> = OnceLock::new();
    let mut dirs = Vec::new();
    if let Some(venv) = std::env::var_os("VIRTUAL_ENV") {
        if let Ok(entries) = std::fs::read_dir(Path::new(&venv).join("lib")) {
            dirs.extend(
                entries
                    .flatten()
                    .map(|entry| entry.path().join("site-packages")),
            );
        }
    }
    dirs.extend(
        FROM_PYTHON
            .get_or_init(|| {
                Command::new("python3")
                    .args([
                        "-c",
                        "import sys; print('\\n'.join(p for p in sys.path if p))",
                    ])
                    .output()
                    .ok()
                    .filter(|output| output.status.success())
                    .map(|output| {
                        String::from_utf8_lossy(&output.stdout)
                            .lines()
                            .map(PathBuf::from)
                            .collect()
                    })
                    .unwrap_or_default()
            })
            .iter()
            .cloned(),
    );
    dirs
}

/// `libnvrtc-builtins.so.<version>` next to NVRTC, if any.
fn find_builtins(dir: &Path) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|entry| entry.path())
        .find(|path| {
            path.file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.starts_with("libnvrtc-builtins.so"))
        })
}

/// Runs `call`, turning a panic into `Err(first line of its message)` without printing it.
/// The process-wide panic hook is swapped for a silent one during the call; a lock keeps two
/// callers from restoring each other's hooks.
pub fn quietly<R>(call: impl FnOnce() -> R) -> Result<R, String> {
    static HOOK_LOCK: Mutex<()> = Mutex::new(());
    let _serialised = HOOK_LOCK
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let previous = panic::take_hook();
    panic::set_hook(Box::new(|_| {}));
    let outcome = panic::catch_unwind(AssertUnwindSafe(call));
    panic::set_hook(previous);
    outcome.map_err(|payload| {
        let message = payload
            .downcast_ref::<&str>()
            .map(|text| text.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_string());
        one_line(&message)
    })
}

/// The first line of `text`, cut at 200 characters: reasons are printed on one line.
pub fn one_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or("").trim();
    match line.char_indices().nth(200) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quietly_turns_panics_into_one_line_errors() {
        assert_eq!(quietly(|| 7), Ok(7));
        let err =
            quietly(|| -> u32 { panic!("Missing symbol cuInit: dlsym failed\nmore") }).unwrap_err();
        assert_eq!(err, "Missing symbol cuInit: dlsym failed");
        let long = "x".repeat(500);
        let err = quietly(move || -> u32 { panic!("{long}") }).unwrap_err();
        assert_eq!(err.chars().count(), 201);
    }

    #[test]
    fn candidates_include_pip_layouts() {
        let dir = PathBuf::from("/opt/example/site-packages/nvidia/cu13/lib");
        let candidates = nvrtc_candidates(std::slice::from_ref(&dir));
        assert!(candidates.contains(&dir.join("libnvrtc.so.13")));
        assert!(candidates.contains(&PathBuf::from("/usr/local/cuda/lib64/libnvrtc.so.12")));
    }

    #[test]
    fn builtins_are_found_next_to_nvrtc() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(find_builtins(dir.path()), None);
        std::fs::write(dir.path().join("libnvrtc-builtins.so.13.5"), b"").unwrap();
        assert_eq!(
            find_builtins(dir.path()),
            Some(dir.path().join("libnvrtc-builtins.so.13.5"))
        );
    }
}
