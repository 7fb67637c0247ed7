//! Engine selection on whatever machine the tests run on: without CUDA (CI), `Auto` falls
//! back to the CPU with a one-line reason and `Cuda` is that reason as an error; with a GPU,
//! both give the CUDA engine. Nothing may panic or abort either way.

use stridelint::verify::{
    select_engine, DType, EngineChoice, MeasureOptions, StridedLayout, VerifyError,
};

#[test]
fn cpu_is_always_available() {
    let (engine, reason) = select_engine(EngineChoice::Cpu).unwrap();
    assert_eq!(engine.name(), "cpu");
    assert_eq!(reason, None);
}

#[test]
fn auto_and_cuda_agree_about_this_machine() {
    let (auto, reason) = select_engine(EngineChoice::Auto).unwrap();
    match select_engine(EngineChoice::Cuda) {
        Ok((cuda, None)) => {
            assert_eq!(cuda.name(), "cuda");
            assert_eq!(auto.name(), "cuda");
            assert_eq!(reason, None);
        }
        Ok((_, Some(reason))) => panic!("an explicit CUDA choice gave a fallback reason: {reason}"),
        Err(err) => {
            eprintln!("no CUDA here: {err}");
            assert!(matches!(err, VerifyError::CudaUnavailable(_)), "{err:?}");
            assert_eq!(auto.name(), "cpu");
            let reason = reason.expect("Auto must say why CUDA was not used");
            assert_eq!(reason, err.to_string());
            assert!(
                !reason.contains('\n') && reason.len() < 400,
                "not one line: {reason}"
            );
        }
    }
}

#[test]
fn the_selected_engine_measures_a_transpose_correctly() {
    let (engine, _) = select_engine(EngineChoice::Auto).unwrap();
    let layout = StridedLayout::contiguous(&[256, 384])
        .transpose(0, 1)
        .unwrap();
    let m = engine
        .measure_copy(&layout, DType::BF16, &MeasureOptions::quick())
        .unwrap();
    assert!(m.checked);
    assert_eq!(m.bytes_copied, 256 * 384 * 2);
}

#[test]
fn engine_names_parse() {
    assert_eq!("auto".parse::<EngineChoice>(), Ok(EngineChoice::Auto));
    assert_eq!("GPU".parse::<EngineChoice>(), Ok(EngineChoice::Cuda));
    assert_eq!("cpu".parse::<EngineChoice>(), Ok(EngineChoice::Cpu));
    assert!("tpu".parse::<EngineChoice>().is_err());
}

/// Builds a stand-in `libcuda` from C source with the system C compiler; `None` (and a
/// printed reason) where there is no compiler.
#[cfg(all(feature = "cuda", target_os = "linux"))]
fn stand_in_driver(dir: &std::path::Path, c_source: &str) -> Option<()> {
    let source = dir.join("stand_in.c");
    std::fs::write(&source, c_source).unwrap();
    let built = std::process::Command::new("cc")
        .args(["-shared", "-fPIC", "-Wl,-soname,libcuda.so.1", "-o"])
        .arg(dir.join("libcuda.so.1"))
        .arg(&source)
        .status();
    if !built.is_ok_and(|status| status.success()) {
        eprintln!("SKIPPED: no C compiler to build a stand-in libcuda");
        return None;
    }
    // cudarc tries the unversioned name first.
    std::fs::copy(dir.join("libcuda.so.1"), dir.join("libcuda.so")).unwrap();
    Some(())
}

/// `stridelint replay` of one copy on the `auto` engine with the stand-in driver first on the
/// loader path: must exit 0 and say on stderr, in one line and without a panic message, why
/// it measures on the CPU. Returns that line ("" when the engine is CUDA after all).
#[cfg(all(feature = "cuda", target_os = "linux"))]
fn replay_with_driver(dir: &std::path::Path) -> String {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_stridelint"))
        .args([
            "replay",
            "--shape",
            "2,3",
            "transpose(0, 1)",
            "contiguous()",
        ])
        .args(["--runs", "1", "--output-format", "json"])
        .env("LD_LIBRARY_PATH", dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "replay failed: {stdout} {stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("replay prints JSON");
    if report["engine"] == "cuda" {
        return String::new();
    }
    assert_eq!(report["engine"], "cpu", "{stdout}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

#[cfg(all(feature = "cuda", target_os = "linux"))]
#[test]
fn a_driver_that_finds_no_gpu_is_reported_not_fatal() {
    let dir = tempfile::tempdir().unwrap();
    let driver = r#"
        typedef int CUresult;
        CUresult cuInit(unsigned int flags) { (void)flags; return 100; }
        CUresult cuGetErrorString(CUresult error, const char **text) {
            *text = error == 100 ? "no CUDA-capable device is detected" : "unknown";
            return 0;
        }
    "#;
    if stand_in_driver(dir.path(), driver).is_none() {
        return;
    }
    let note = replay_with_driver(dir.path());
    if !note.is_empty() {
        assert!(
            note.contains(
                "measuring on the CPU: CUDA unavailable: cannot open GPU 0: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)"
            ),
            "{note}"
        );
    }
}

#[cfg(all(feature = "cuda", target_os = "linux"))]
#[test]
fn a_driver_missing_its_symbols_is_reported_not_fatal() {
    let dir = tempfile::tempdir().unwrap();
    if stand_in_driver(
        dir.path(),
        "int stridelint_stand_in_without_cuda_symbols = 1;\n",
    )
    .is_none()
    {
        return;
    }
    let note = replay_with_driver(dir.path());
    assert!(
        note.contains(
            "measuring on the CPU: CUDA unavailable: the CUDA driver failed: Missing symbol cuInit"
        ),
        "{note}"
    );
}
