"""Rust packages (issue 19, dependencies in every shape): Cargo.toml dependencies and forwarded features, build.rs
string literals, and the exact findings of the cargo rules and of the nvcc-flag family on build scripts."""

from __future__ import annotations

from pathlib import Path

import pytest

from migrate.discover import classify
from migrate.model import FileKind, Severity, Skipped
from migrate.parse.rust import lex

from conftest import file_findings, parse_file, scan_files


def _packages(doc) -> list[tuple]:
    return [(i.name, i.line, i.column, i.args, i.optional) for i in doc.manifest if i.kind == "package"]


def _findings(root: Path, files: dict[str, str]) -> list[tuple]:
    result = scan_files(root, files)
    found = [*result.findings, *result.guarded_findings]
    return sorted((f.path, f.line, f.rule, f.severity.label) for f in found)


# --- discovery -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("relpath", "kind"),
    [("Cargo.toml", FileKind.CARGO), ("crates/core/Cargo.toml", FileKind.CARGO), ("build.rs", FileKind.RUST_BUILD),
     ("kernels/build.rs", FileKind.RUST_BUILD), ("src/lib.rs", FileKind.RUST), ("Cargo.lock", None)],
)
def test_rust_files_are_classified_by_name(relpath: str, kind: FileKind | None) -> None:
    assert classify(relpath) == kind


# --- Cargo.toml ----------------------------------------------------------------------------------


def test_cargo_dependencies_features_and_what_default_reaches(tmp_path: Path) -> None:
    text = (
        '[dependencies]\n'
        'candle-core = { version = "0.11", features = ["cuda"] }\n'
        'cudarc = { version = "0.19", optional = true }\n'
        'flash = { package = "candle-flash-attn", version = "0.11", optional = true }\n'
        '\n'
        '[dev-dependencies]\n'
        'cust = "0.3"\n'
        '\n'
        '[dependencies.bindgen_cuda]\n'
        'version = "0.1"\n'
        '\n'
        '[features]\n'
        'default = ["attn"]\n'
        'attn = ["dep:flash", "candle-nn?/flash-attn"]\n'
        'cuda = ["dep:cudarc", "candle-core/cudnn"]\n'
    )
    doc = parse_file(tmp_path, "Cargo.toml", FileKind.CARGO, text)
    assert _packages(doc) == [
        ("candle-core", 2, 1, ("cuda",), False),
        ("cudarc", 3, 1, (), True),  # optional, and no default feature turns it on
        ("candle-flash-attn", 4, 1, (), False),  # optional, but the default feature `attn` turns it on
        ("bindgen-cuda", 9, 15, (), False),  # its own table; crates.io reads _ as -
        ("cust", 7, 1, (), True),  # a dev-dependency: tests and examples only
        ("candle-nn", 14, 22, ("flash-attn",), False),  # a weak forward of an undeclared crate, on by default
        ("candle-core", 15, 23, ("cudnn",), True),
    ]


def test_workspace_dependencies_are_declarations_and_weak_forwards_follow_their_crate(tmp_path: Path) -> None:
    text = (
        '[workspace.dependencies]\n'
        'cudarc = { version = "0.19", features = ["cublas"] }\n'
        '[dependencies]\n'
        'burn-cuda = { version = "0.19", optional = true }\n'
        '[features]\n'
        'default = ["std"]\n'
        'std = ["burn-cuda?/std"]\n'
    )
    doc = parse_file(tmp_path, "Cargo.toml", FileKind.CARGO, text)
    assert _packages(doc) == [
        ("burn-cuda", 4, 1, (), True),
        ("cudarc", 2, 1, ("cublas",), True),  # inherited by members, who decide whether it is on
        ("burn-cuda", 7, 8, ("std",), True),  # on by default, but only where burn-cuda is on: it is not
    ]


def test_invalid_cargo_toml_is_skipped(tmp_path: Path) -> None:
    doc = parse_file(tmp_path, "Cargo.toml", FileKind.CARGO, "[dependencies\ncudarc = 1\n")
    assert isinstance(doc, Skipped) and doc.reason.startswith("invalid TOML")


def test_cargo_rules_exact_findings(tmp_path: Path) -> None:
    manifest = (
        '[dependencies]\n'
        'candle-core = { version = "0.11" }\n'
        'ort = { version = "2.0.0-rc.13", features = ["migraphx"] }\n'
        'cudarc = { version = "0.19", optional = true }\n'
        'burn = { version = "0.19", features = ["rocm"] }\n'
        '[features]\n'
        'default = ["gpu"]\n'
        'gpu = ["candle-core/cuda"]\n'
        'trt = ["ort/tensorrt"]\n'
        'amd = ["ort/migraphx", "burn/rocm"]\n'
        'metal = ["candle-core/metal"]\n'
        'nv = ["dep:cudarc", "whisper/cuda", "burn/cuda"]\n'
        '# cuda = ["candle-core/cuda"]\n'
    )
    assert _findings(tmp_path, {"Cargo.toml": manifest}) == [
        ("Cargo.toml", 4, "cargo-cudarc-dependency", "low"),  # optional and off by default: low at most
        ("Cargo.toml", 8, "cargo-candle-cuda-feature", "high"),  # the default feature: the main path
        ("Cargo.toml", 9, "cargo-ort-cuda-feature", "low"),
        ("Cargo.toml", 12, "cargo-burn-cuda-feature", "low"),
        ("Cargo.toml", 12, "cargo-cuda-feature-forward", "low"),
    ]


# --- build.rs ------------------------------------------------------------------------------------


def test_rust_lexer_blanks_comments_and_keeps_literals() -> None:
    text = (
        '// "not a string"\n'
        'let a = "x\\"y"; /* outer /* "nested" */ still */ let b = r#"raw "q" -O3"#;\n'
        "let c: &'static str = b\"bytes\"; let d = '\"'; let e = 'x';\n"
    )
    code, literals = lex(text)
    assert len(code) == len(text)
    assert [lit.value for lit in literals] == ['x"y', 'raw "q" -O3', "bytes"]
    assert "nested" not in code and "not a string" not in code and "static" in code


def test_build_script_exact_findings(tmp_path: Path) -> None:
    script = (
        "// nvcc --use_fast_math in a comment stays quiet\n"
        "fn main() {\n"
        "    let cap = std::env::var(\"CUDA_COMPUTE_CAP\").unwrap();\n"
        "    let b = cudaforge::KernelBuilder::new()\n"
        "        .arg(\"--expt-relaxed-constexpr\")\n"
        "        .arg(\"-lineinfo\")\n"
        "        .arg(format!(\"--gpu-architecture=sm_{cap}\"))\n"
        "        .arg(\"-O3\");\n"
        "    println!(\"cargo:warning=try --use_fast_math for speed\");\n"
        "    println!(\"cargo:rustc-link-lib=dylib=cublasLt\");\n"
        "    println!(\"cargo:rustc-link-lib=static=mykernels\");\n"
        "}\n"
    )
    assert _findings(tmp_path, {"build.rs": script}) == [
        ("build.rs", 3, "cuda-arch-list-env", "low"),
        ("build.rs", 4, "rust-build-nvcc", "high"),
        ("build.rs", 5, "nvcc-flag-hipcc-rejects", "high"),
        ("build.rs", 6, "nvcc-flag-hipcc-ignores", "low"),
        ("build.rs", 7, "nvcc-arch-flags", "medium"),
        ("build.rs", 10, "cuda-link-library", "medium"),
    ]


def test_build_script_without_nvcc_reports_no_flags(tmp_path: Path) -> None:
    script = (
        "fn main() {\n"
        "    cc::Build::new().flag(\"--use_fast_math\").flag(\"-lineinfo\").file(\"a.c\").compile(\"a\");\n"
        "    println!(\"cargo:rustc-link-lib=dylib=z\");\n"
        "}\n"
    )
    assert _findings(tmp_path, {"build.rs": script}) == []


def test_when_optional_is_a_severity() -> None:
    from migrate.matchers import get

    validate = get("manifest-package").validate
    assert validate is not None
    validate({"matcher": "manifest-package", "names": ["cudarc"], "when_optional": "low"})
    with pytest.raises(ValueError):
        validate({"matcher": "manifest-package", "names": ["cudarc"], "when_optional": "sometimes"})
    assert Severity.parse("low") < Severity.parse("high")


RUST_NVPTX = Path(__file__).resolve().parents[2] / "fixtures" / "rules" / "manifests" / "rust-nvptx"


def test_a_build_script_compiling_a_rust_crate_to_ptx_is_reported(tmp_path: Path) -> None:
    source = (RUST_NVPTX / "build.rs").read_text(encoding="utf-8")
    assert file_findings(tmp_path, "build.rs", source) == [("rust-build-ptx", 2, "high", 2)]


def test_nvptx_device_code_is_reported_once_per_file(tmp_path: Path) -> None:
    # core::arch::nvptx (5), the llvm.nvvm link_name (8), PTX in asm! (14), the ptx-kernel ABI (19)
    source = (RUST_NVPTX / "kernels/src/lib.rs").read_text(encoding="utf-8")
    assert file_findings(tmp_path, "kernels/src/lib.rs", source) == [("rust-nvptx-device-code", 5, "high", 4)]


def test_host_code_naming_the_device_words_in_comments_strings_and_cfg_stays_quiet(tmp_path: Path) -> None:
    source = (RUST_NVPTX / "host/src/main.rs").read_text(encoding="utf-8")
    assert file_findings(tmp_path, "host/src/main.rs", source) == []


def test_an_architecture_kept_in_a_variable_of_an_nvcc_script_is_an_arch_flag(tmp_path: Path) -> None:
    script = (
        "use std::process::Command;\n"
        "fn main() {\n"
        "    let virtual_arch = \"compute_75\";\n"
        "    let real_arch = \"sm_75\";\n"
        "    println!(\"cargo:warning=needs sm_75 or newer\");\n"
        "    Command::new(\"nvcc\").arg(\"-ptx\").arg(format!(\"-arch={}\", virtual_arch))\n"
        "        .arg(format!(\"-code={}\", real_arch)).status().unwrap();\n"
        "}\n"
    )
    assert _findings(tmp_path, {"build.rs": script}) == [
        ("build.rs", 3, "nvcc-arch-flags", "medium"),
        ("build.rs", 4, "nvcc-arch-flags", "medium"),
        ("build.rs", 6, "nvcc-flag-hipcc-rejects", "high"),
        ("build.rs", 6, "rust-build-nvcc", "high"),
    ]


def test_an_architecture_literal_of_a_script_without_nvcc_stays_quiet(tmp_path: Path) -> None:
    script = (
        "fn main() {\n"
        "    let target = \"sm_80\";  // passed to a prebuilt-artifact download, no compiler run here\n"
        "    println!(\"cargo:rustc-env=KERNEL_TARGET={}\", target);\n"
        "}\n"
    )
    assert _findings(tmp_path, {"build.rs": script}) == []


def test_nvidia_smi_run_from_rust_is_reported_where_the_command_is_built(tmp_path: Path) -> None:
    # the message literal naming the tool (line 13) is not a command
    source = (RUST_NVPTX / "host/src/probe.rs").read_text(encoding="utf-8")
    assert file_findings(tmp_path, "host/src/probe.rs", source) == [("rust-nvidia-smi", 5, "medium", 0)]


def test_nvcc_run_by_a_rust_build_helper_is_reported_once_per_file_with_its_arch_flag(tmp_path: Path) -> None:
    # which::which("nvcc") (8) and Command::new("nvcc") (12) are one finding; sm_80 (15) is an arch flag; the message
    # naming nvcc and sm_80 (30) and which("clang") (28) stay quiet
    source = (RUST_NVPTX / "host/src/fatbin.rs").read_text(encoding="utf-8")
    assert file_findings(tmp_path, "host/src/fatbin.rs", source) == [
        ("rust-nvcc-run", 8, "medium", 2), ("nvcc-arch-flags", 15, "medium", 0)]


def test_hipcc_run_from_rust_and_nvcc_in_a_message_stay_quiet(tmp_path: Path) -> None:
    source = (RUST_NVPTX / "host/src/hipbuild.rs").read_text(encoding="utf-8")
    assert file_findings(tmp_path, "host/src/hipbuild.rs", source) == []


def test_a_build_script_that_looks_nvcc_up_with_which_drives_nvcc(tmp_path: Path) -> None:
    # the crate's CUDA build is engaged only when nvcc is found: the lookup is where the script drives nvcc
    script = (
        "fn main() {\n"
        "    let nvcc = match std::env::var(\"NVCC\") {\n"
        "        Ok(var) => which::which(var),\n"
        "        Err(_) => which::which(\"nvcc\"),\n"
        "    };\n"
        "    if nvcc.is_ok() { helper::compile(\"src/msm.cu\"); }\n"
        "    println!(\"cargo:warning=which(nvcc) found nothing\");\n"
        "}\n"
    )
    assert _findings(tmp_path, {"build.rs": script}) == [("build.rs", 4, "rust-build-nvcc", "high")]


def test_ptx_loaded_or_jit_compiled_by_rust_host_code_is_reported_once_per_file(tmp_path: Path) -> None:
    # Ptx::from_file (8) and NVRTC's compile_ptx (9); the `use` line imports a name and calls nothing
    source = (RUST_NVPTX / "host/src/launch.rs").read_text(encoding="utf-8")
    assert file_findings(tmp_path, "host/src/launch.rs", source) == [("rust-ptx-module-load", 8, "medium", 2)]


def test_a_ptx_named_enum_variant_and_a_comment_stay_quiet(tmp_path: Path) -> None:
    source = (RUST_NVPTX / "host/src/formats.rs").read_text(encoding="utf-8")
    assert file_findings(tmp_path, "host/src/formats.rs", source) == []
