//! Compiling `kernels/*.cu` with NVRTC at run time, for the GPU actually present.
//!
//! CUBIN first: machine code for the device's own `sm_XY` needs no driver-side PTX JIT, so it
//! also works when the NVRTC found is newer than the driver (PTX from a newer NVRTC is refused
//! with `CUDA_ERROR_UNSUPPORTED_PTX_VERSION`). PTX for `compute_XY` is the fallback for an
//! NVRTC that cannot emit CUBIN for the device. See `../shared/spec/cuda-engine.md` §2.

use std::ffi::{c_char, CString};

use cudarc::nvrtc::{result, sys};

use super::probe::{one_line, quietly};
use crate::verify::error::VerifyError;

/// The kernels as one NVRTC program: the shared header, then every kernel file.
pub fn kernel_source() -> String {
    [
        include_str!("../../../kernels/strided_common.cuh"),
        include_str!("../../../kernels/strided_gather.cu"),
        include_str!("../../../kernels/transpose_tiled.cu"),
    ]
    .join("\n")
}

/// Compiled kernels, ready for `CudaContext::load_module`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompiledKernels {
    /// Device machine code for `sm_<major><minor>`.
    Cubin { arch: String, image: Vec<u8> },
    /// PTX for `compute_<major><minor>`, JIT-compiled by the driver when loaded.
    Ptx { arch: String, text: String },
}

impl CompiledKernels {
    /// `CUBIN sm_90` / `PTX compute_90`, for the device description.
    pub fn describe(&self) -> String {
        match self {
            CompiledKernels::Cubin { arch, .. } => format!("CUBIN {arch}"),
            CompiledKernels::Ptx { arch, .. } => format!("PTX {arch}"),
        }
    }
}

/// What NVRTC should produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Cubin,
    Ptx,
}

/// Compiles the kernels for compute capability `(major, minor)` as `target`. Errors carry the
/// first line of NVRTC's log; a missing NVRTC library is an error too, never a panic.
pub fn compile_kernels(
    capability: (i32, i32),
    target: Target,
) -> Result<CompiledKernels, VerifyError> {
    let (major, minor) = capability;
    let arch = match target {
        Target::Cubin => format!("sm_{major}{minor}"),
        Target::Ptx => format!("compute_{major}{minor}"),
    };
    let options = vec![
        format!("--gpu-architecture={arch}"),
        "--std=c++17".to_string(),
    ];
    let output = quietly(|| compile_program(&kernel_source(), &options, target))
        .map_err(|panic| VerifyError::CudaUnavailable(format!("NVRTC could not run: {panic}")))?
        .map_err(|why| {
            VerifyError::CudaUnavailable(format!(
                "NVRTC failed to compile the kernels for {arch}: {why}"
            ))
        })?;
    Ok(match target {
        Target::Cubin => CompiledKernels::Cubin {
            arch,
            image: output,
        },
        Target::Ptx => CompiledKernels::Ptx {
            arch,
            text: String::from_utf8_lossy(&output)
                .trim_end_matches('\0')
                .to_string(),
        },
    })
}

/// NVRTC's `(major, minor)` version, if the library can be loaded.
pub fn nvrtc_version() -> Option<(i32, i32)> {
    quietly(|| {
        let (mut major, mut minor) = (0, 0);
        // SAFETY: plain out-parameters.
        unsafe { sys::nvrtcVersion(&mut major, &mut minor) }
            .result()
            .ok()
            .map(|()| (major, minor))
    })
    .ok()
    .flatten()
}

/// One create → compile → extract → destroy cycle. `Err` holds a one-line reason.
fn compile_program(source: &str, options: &[String], target: Target) -> Result<Vec<u8>, String> {
    let source =
        CString::new(source).map_err(|_| "kernel source contains a NUL byte".to_string())?;
    let name = CString::new("stridelint_kernels.cu").expect("static name has no NUL");
    let program = result::create_program(&source, Some(&name)).map_err(|err| format!("{err:?}"))?;
    // SAFETY: `program` was just created and is destroyed exactly once below.
    let output = unsafe { compile_and_extract(program, options, target) };
    // SAFETY: as above.
    let _ = unsafe { result::destroy_program(program) };
    output
}

/// # Safety
/// `program` must be a live NVRTC program.
unsafe fn compile_and_extract(
    program: sys::nvrtcProgram,
    options: &[String],
    target: Target,
) -> Result<Vec<u8>, String> {
    if let Err(err) = result::compile_program(program, options) {
        let log = result::get_program_log(program)
            .map(|raw| c_chars_to_string(&raw))
            .unwrap_or_default();
        let first_error = log
            .lines()
            .find(|line| line.contains("error"))
            .or_else(|| log.lines().next())
            .unwrap_or("");
        return Err(format!("{err:?}: {}", one_line(first_error)));
    }
    match target {
        Target::Ptx => result::get_ptx(program)
            .map(|raw| raw.iter().map(|&c| c as u8).collect())
            .map_err(|err| format!("{err:?}")),
        Target::Cubin => {
            let mut size = 0usize;
            sys::nvrtcGetCUBINSize(program, &mut size)
                .result()
                .map_err(|err| format!("{err:?}"))?;
            let mut image = vec![0u8; size];
            sys::nvrtcGetCUBIN(program, image.as_mut_ptr() as *mut c_char)
                .result()
                .map_err(|err| format!("{err:?}"))?;
            Ok(image)
        }
    }
}

fn c_chars_to_string(raw: &[c_char]) -> String {
    let bytes: Vec<u8> = raw
        .iter()
        .map(|&c| c as u8)
        .take_while(|&b| b != 0)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_holds_the_header_before_the_kernels() {
        let source = kernel_source();
        let header = source.find("struct GatherParams").unwrap();
        let gather = source.find("strided_gather_16(").unwrap();
        let transpose = source.find("transpose_tiled_2_pack2(").unwrap();
        assert!(header < gather && header < transpose);
    }

    #[test]
    fn descriptions_name_the_code_kind() {
        let cubin = CompiledKernels::Cubin {
            arch: "sm_90".into(),
            image: vec![],
        };
        assert_eq!(cubin.describe(), "CUBIN sm_90");
    }
}
