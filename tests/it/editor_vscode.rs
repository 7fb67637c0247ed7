//! The VS Code extension (`editors/vscode/`): its manifest names the files and settings the
//! extension reads, and `test/activate.test.js` activates it against stand-ins for the
//! editor's API and checks that it starts `stridelint server`. Skipped without `node`.

use std::path::Path;
use std::process::Command;

fn extension_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("editors/vscode")
}

#[test]
fn the_manifest_starts_on_python_rust_and_notebooks_and_declares_the_settings() {
    let text = std::fs::read_to_string(extension_dir().join("package.json")).unwrap();
    let manifest: serde_json::Value = serde_json::from_str(&text).unwrap();
    let main = manifest["main"].as_str().unwrap();
    assert!(extension_dir().join(main).is_file(), "`main` is {main}");
    let events: Vec<&str> = manifest["activationEvents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    for wanted in [
        "onLanguage:python",
        "onLanguage:rust",
        "onNotebook:jupyter-notebook",
    ] {
        assert!(events.contains(&wanted), "{wanted} in {events:?}");
    }
    let properties = &manifest["contributes"]["configuration"]["properties"];
    assert_eq!(properties["stridelint.path"]["default"], "stridelint");
    assert_eq!(properties["stridelint.inlayHints"]["default"], false);
    let lock = std::fs::read_to_string(extension_dir().join("package-lock.json")).unwrap();
    assert!(
        lock.contains("\"node_modules/vscode-languageclient\""),
        "the lock file pins the client"
    );
}

#[test]
fn activating_the_extension_starts_the_server() {
    if Command::new("node").arg("--version").output().is_err() {
        println!("skipping: node not installed");
        return;
    }
    let out = Command::new("node")
        .arg("test/activate.test.js")
        .current_dir(extension_dir())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
