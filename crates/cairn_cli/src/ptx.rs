//! The PTX of a program's device lanes for a device target (language §36, §41), made for `emit
//! --ptx`, `predict --inspect` and builds for a GPU alike, with the target's judgement:
//! `E-TARGET` for a bad spelling, `E-TARGET-TOOLKIT` for a target LLVM 19's NVPTX back end lacks.
//! In `cairn-full` only: it links LLVM (`cairn_codegen`), which `device.rs` must not.

/// Why a program's PTX was not made.
pub(crate) enum PtxError {
    /// The device target is missing, misspelt or not one LLVM compiles: a code and a message.
    Refused(&'static str, String),
    /// The device code generator failed.
    Internal(String),
}

/// The PTX of `functions`' device lanes for device target `target` (`emit --ptx`, `predict
/// --inspect`).
pub(crate) fn device_ptx(
    functions: &[std::sync::Arc<cairn_mir::Function>],
    target: Option<&str>,
    site: cairn_codegen::SiteText<'_>,
    keep_guards: bool,
) -> Result<cairn_codegen::Ptx, PtxError> {
    let Some(name) = target else {
        return Err(PtxError::Refused(
            "E-TARGET",
            "PTX is made for a device target: pass --device-target (sm_90, for example) or set `device_target` under [build] in the manifest.".to_string(),
        ));
    };
    let arch = device_arch(name).map_err(|(code, message)| PtxError::Refused(code, message))?;
    cairn_codegen::compile_ptx(functions, arch, site, keep_guards).map_err(PtxError::Internal)
}

/// The architecture LLVM compiles for the device target `name`: `E-TARGET` for a bad spelling,
/// `E-TARGET-TOOLKIT` for a target LLVM 19's NVPTX back end lacks.
pub(crate) fn device_arch(name: &str) -> Result<cairn_codegen::DeviceArch, (&'static str, String)> {
    cairn_vfs::check_device_target(name).map_err(|message| ("E-TARGET", message))?;
    let digits: String = name["sm_".len()..].chars().take_while(char::is_ascii_digit).collect();
    let specific = name.ends_with('a');
    cairn_codegen::DeviceArch::new(digits.parse().unwrap_or(0), specific)
        .map_err(|message| ("E-TARGET-TOOLKIT", format!("{message}: name one of those.")))
}
