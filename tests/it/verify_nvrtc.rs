//! Compiles every kernel in `kernels/` with NVRTC, as the CUDA engine does at run time.
//!
//! NVRTC needs no GPU, only its library: pip's `nvidia-cuda-nvrtc` wheel provides one on a
//! CPU-only machine. The test looks for it in `$STRIDELINT_NVRTC`, in `.venv-nvrtc/` at the
//! crate root (`python3 -m venv .venv-nvrtc && .venv-nvrtc/bin/pip install nvidia-cuda-nvrtc`),
//! in the active virtualenv and on `python3`'s path; without one it prints why and passes.
#![cfg(feature = "cuda")]

use std::path::PathBuf;

use crate::tool_support;

use stridelint::verify::cuda::nvrtc::{compile_kernels, nvrtc_version, CompiledKernels, Target};
use stridelint::verify::cuda::probe::preload_nvrtc;
use stridelint::verify::kernel_params::all_kernel_names;

/// `.venv-nvrtc/lib/python3.*/site-packages/nvidia/cu13/lib` under the crate root.
fn venv_nvrtc_dirs() -> Vec<PathBuf> {
    let lib = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".venv-nvrtc/lib");
    std::fs::read_dir(lib)
        .map(|entries| {
            entries
                .flatten()
                .map(|entry| entry.path().join("site-packages/nvidia/cu13/lib"))
                .collect()
        })
        .unwrap_or_default()
}

fn nvrtc_available() -> bool {
    if let Some(loaded) = preload_nvrtc(&venv_nvrtc_dirs()) {
        eprintln!("preloaded NVRTC from {}", loaded.display());
    }
    // SAFETY: only probes library names.
    let present = unsafe { cudarc::nvrtc::sys::is_culib_present() };
    if !present {
        tool_support::missing(
            "libnvrtc",
            "is not found (no GPU is needed, only the library)",
            "pip's nvidia-cuda-nvrtc in .venv-nvrtc",
        );
    }
    present
}

#[test]
fn every_kernel_compiles_to_ptx_and_cubin_for_hopper_and_ampere() {
    if !nvrtc_available() {
        return;
    }
    eprintln!("NVRTC version: {:?}", nvrtc_version());
    for capability in [(9, 0), (8, 0)] {
        let ptx = compile_kernels(capability, Target::Ptx).unwrap_or_else(|err| panic!("{err}"));
        let CompiledKernels::Ptx { text, .. } = &ptx else {
            unreachable!()
        };
        for name in all_kernel_names() {
            assert!(
                text.contains(&format!(".entry {name}(")),
                "PTX for {capability:?} lacks kernel {name}"
            );
        }
        let cubin =
            compile_kernels(capability, Target::Cubin).unwrap_or_else(|err| panic!("{err}"));
        let CompiledKernels::Cubin { image, arch } = &cubin else {
            unreachable!()
        };
        assert_eq!(
            &image[..4],
            b"\x7fELF",
            "CUBIN for {arch} is not an ELF image"
        );
        for name in all_kernel_names() {
            assert!(
                image
                    .windows(name.len())
                    .any(|window| window == name.as_bytes()),
                "CUBIN for {arch} lacks kernel {name}"
            );
        }
        eprintln!(
            "compiled for {arch}: {} bytes of CUBIN, {} bytes of PTX",
            image.len(),
            text.len()
        );
    }
}

#[test]
fn gather_kernels_keep_their_arguments_out_of_local_memory() {
    if !nvrtc_available() {
        return;
    }
    // The offset loops are unrolled over the argument arrays precisely so that they are read
    // from the parameter bank; a dynamic index would copy the block to local memory
    // (`.local` in PTX) in every thread.
    let CompiledKernels::Ptx { text, .. } = compile_kernels((9, 0), Target::Ptx).unwrap() else {
        unreachable!()
    };
    assert!(!text.contains(".local"), "a kernel uses local memory");
}

#[test]
fn an_unknown_architecture_is_a_one_line_error_not_a_panic() {
    if !nvrtc_available() {
        return;
    }
    // NVRTC's refusal comes back as the engine's one-line reason.
    let err = compile_kernels((1, 0), Target::Cubin)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("CUDA unavailable: NVRTC failed to compile the kernels for sm_10"),
        "{err}"
    );
    assert!(!err.contains('\n'), "{err}");
}
