"""The manifest families of issue 19: .gitmodules, DeepStream configs, Makefile fragments, variables that name
images or are read by scripts, version bounds of a pin, and what a repository says about its own package."""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.version import Version

from migrate.config import Settings
from migrate.discover import classify
from migrate.matchers import get
from migrate.matchers.manifest_package import predates
from migrate.model import FileKind
from migrate.parse.gitmodules import repository_name
from migrate.parse.manifest import Item, Positions
from migrate.parse.shell import image_reference, installer_functions, shell_items
from migrate.scan import scan

from conftest import parse_file

_parse = parse_file


def _items(doc, kind: str) -> list[tuple]:
    return [(i.name, i.line, i.column, i.value) for i in doc.manifest if i.kind == kind]


def _shell(text: str, kind: str) -> list[tuple[str, int, int]]:
    return [(i.name, i.line, i.column) for i in shell_items(text, Positions(text).at) if i.kind == kind]


# --- .gitmodules ---------------------------------------------------------------------------------


def test_gitmodules_urls_are_read_as_text(tmp_path: Path) -> None:
    text = (
        '[submodule "csrc/cutlass"]\n\tpath = csrc/cutlass\n\turl = https://github.com/NVIDIA/cutlass.git\n'
        '[submodule "a \\"quoted\\" name"]\n\tURL = "git@github.com:NVlabs/tiny-cuda-nn" ; a comment\n'
        '[core]\n\turl = https://example.com/not-a-submodule\n'
        '# url = https://github.com/NVIDIA/cub\n'
    )
    doc = _parse(tmp_path, ".gitmodules", FileKind.GITMODULES, text)
    assert [(i.name, i.line, i.column, i.url, i.args) for i in doc.manifest] == [
        ("cutlass", 3, 8, "https://github.com/NVIDIA/cutlass.git", ("submodule", "csrc/cutlass")),
        ("tiny-cuda-nn", 5, 8, "git@github.com:NVlabs/tiny-cuda-nn", ("submodule", 'a "quoted" name')),
    ]


@pytest.mark.parametrize(
    ("url", "name"),
    [("https://github.com/NVIDIA/cub.git", "cub"), ("git@github.com:NVIDIA/thrust", "thrust"),
     ("https://gitlab.inria.fr/bkerbl/simple-knn/", "simple-knn"), ("../relative/Apex.git", "apex")],
)
def test_repository_name(url: str, name: str) -> None:
    assert repository_name(url) == name


# --- ROS package.xml ----------------------------------------------------------------------------


def test_ros_package_dependencies_are_items_and_comments_are_not(tmp_path: Path) -> None:
    text = (
        '<package format="3">\n  <name>seg</name>\n'
        '  <!-- <depend>isaac_ros_gxf</depend>\n       a note -->\n'
        '  <depend>Isaac_ROS_Nitros</depend>\n  <exec_depend condition="$ROS_VERSION == 2">tensorrt</exec_depend>\n'
        '  <test_depend>cvcuda0-dev</test_depend>\n</package>\n'
    )
    doc = _parse(tmp_path, "package.xml", FileKind.ROS_PACKAGE, text)
    assert [(i.name, i.line, i.column, i.args, i.optional) for i in doc.manifest] == [
        ("isaac-ros-nitros", 5, 11, ("depend",), False),
        ("tensorrt", 6, 46, ("exec_depend",), False),
        ("cvcuda0-dev", 7, 16, ("test_depend",), True),
    ]


# --- JVM builds: pom.xml, build.gradle(.kts) ----------------------------------------------------------


def test_pom_dependencies_are_group_artifact_items_and_comments_are_not(tmp_path: Path) -> None:
    text = (
        "<project>\n  <!-- <dependency><groupId>org.jcuda</groupId><artifactId>jcudnn</artifactId></dependency> -->\n"
        "  <dependencies>\n    <dependency>\n      <groupId>org.jcuda</groupId>\n"
        "      <artifactId>JCublas</artifactId>\n    </dependency>\n"
        "    <dependency><groupId>org.nd4j</groupId><artifactId>nd4j-cuda-11.6</artifactId>"
        "<scope>test</scope></dependency>\n"
        "    <dependency><groupId>ai.rapids</groupId><artifactId>cudf</artifactId><optional>true</optional>"
        "</dependency>\n  </dependencies>\n</project>\n"
    )
    doc = _parse(tmp_path, "pom.xml", FileKind.JVM_BUILD, text)
    assert [(i.name, i.line, i.column, i.optional) for i in doc.manifest] == [
        ("org.jcuda:jcublas", 6, 19, False), ("org.nd4j:nd4j-cuda-11.6", 8, 56, True), ("ai.rapids:cudf", 9, 57, True),
    ]


def test_gradle_coordinates_in_either_dsl_and_the_map_form(tmp_path: Path) -> None:
    text = (
        "dependencies {\n    // implementation 'org.jcuda:jcudnn:12.0.0'\n"
        "    implementation 'org.jcuda:jcuda:12.0.0'\n"
        '    testImplementation("org.jcuda:jcufft:${jcudaVersion}") { isTransitive = false }\n'
        "    compile group: 'org.bytedeco', name: 'cuda-platform', version: '12.3-8.9-1.5.10'\n"
        '    val url = "https://example.com/x:y"\n}\n'
    )
    doc = _parse(tmp_path, "build.gradle", FileKind.JVM_BUILD, text)
    assert [(i.name, i.line, i.column, i.optional) for i in doc.manifest] == [
        ("org.jcuda:jcuda", 3, 21, False), ("org.jcuda:jcufft", 4, 25, True), ("org.bytedeco:cuda-platform", 5, 21, False),
    ]


def test_a_jvm_build_on_cuda_bindings_is_one_high_finding_and_a_cpu_backend_is_quiet(tmp_path: Path) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "build.gradle.kts").write_text(
        'dependencies {\n    implementation("org.nd4j:nd4j-native-platform:1.0.0-M2")\n'
        '    implementation("org.nd4j:nd4j-cuda-11.8-platform:1.0.0-M2")\n'
        '    implementation("org.jcuda:jcublas:12.0.0")\n}\n', encoding="utf-8")
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "build.gradle").write_text(
        "dependencies {\n    testImplementation 'org.jcuda:jcuda:12.0.0'\n"
        "    implementation 'org.example.cuda:cuda-report:0.1'\n}\n", encoding="utf-8")
    found = [(f.path, f.line, f.rule, f.severity.label, len(f.occurrences))
             for f in scan(tmp_path, Settings(jobs=1)).findings]
    assert found == [("app/build.gradle.kts", 3, "jvm-cuda-binding", "high", 2),
                     ("lib/build.gradle", 2, "jvm-cuda-binding", "low", 0)]


# --- .NET projects: .csproj, .fsproj ----------------------------------------------------------------


def test_dotnet_references_are_package_items_by_name_and_projects_by_file_name(tmp_path: Path) -> None:
    text = (
        '<Project>\n  <!-- <PackageReference Include="ManagedCuda-11" /> -->\n  <ItemGroup>\n'
        '    <PackageReference Include="TorchSharp-cuda-windows" Version="0.105.0" />\n'
        '    <ProjectReference Include="..\\ExternalProjects\\managedCuda\\ManagedCuda.netCore.csproj">\n'
        '    </ProjectReference>\n    <ProjectReference Include="$(SharedItems)" />\n  </ItemGroup>\n</Project>\n'
    )
    doc = _parse(tmp_path, "App.csproj", FileKind.MSBUILD, text)
    assert [(i.name, i.line, i.column, i.args) for i in doc.manifest] == [
        ("torchsharp-cuda-windows", 4, 32, ("PackageReference",)),
        ("managedcuda.netcore", 5, 32, ("ProjectReference",)),
    ]


def test_a_dotnet_project_on_managedcuda_is_one_high_finding(tmp_path: Path) -> None:
    (tmp_path / "Engine.fsproj").write_text(
        '<Project>\n  <ItemGroup>\n    <PackageReference Include="ManagedCuda-CUBLAS" Version="12.4.57" />\n'
        '    <PackageReference Include="ManagedCuda-12" Version="12.4.57" />\n'
        '    <PackageReference Include="TorchSharp-cpu" Version="0.105.0" />\n  </ItemGroup>\n</Project>\n',
        encoding="utf-8")
    found = [(f.path, f.line, f.rule, f.severity.label, len(f.occurrences))
             for f in scan(tmp_path, Settings(jobs=1)).findings]
    assert found == [("Engine.fsproj", 3, "dotnet-cuda-binding", "high", 2)]


# --- DeepStream inference configs ----------------------------------------------------------------



def test_mixed_case_submodule_urls_are_reported(tmp_path: Path) -> None:
    """Names compare lower-cased but the URL keeps its case: github.com/NVIDIA/TransformerEngine is a CUDA-only
    submodule as much as .../cutlass is (the prefilter once looked for `transformerengine` only)."""
    (tmp_path / ".gitmodules").write_text(
        '[submodule "te"]\n\tpath = te\n\turl = https://github.com/NVIDIA/TransformerEngine.git\n'
        '[submodule "bsa"]\n\tpath = bsa\n\turl = https://github.com/some-lab/Block-Sparse-Attention\n'
        '[submodule "notes"]\n\tpath = notes\n\turl = https://github.com/some-lab/AttentionNotes\n',
        encoding="utf-8")
    found = [(f.line, f.rule, f.symbol) for f in scan(tmp_path, Settings(jobs=1)).findings]
    assert found == [(3, "cuda-only-submodule", "transformerengine"), (6, "cuda-only-submodule", "block-sparse-attention")]


def test_cuda_flavour_packages(tmp_path: Path) -> None:
    """A name ending in -cuda (any spelling) is a CUDA build or a CUDA-only extension; the names other rules own
    and the flavours that say they are not CUDA stay with those rules or quiet."""
    (tmp_path / "requirements.txt").write_text(
        "torchac_cuda>=0.2.5\nOnnxruntime-GenAI-CUDA\nmooncake-transfer-engine-non-cuda\ndask-cuda\ncuda-utils\n",
        encoding="utf-8")
    found = [(f.line, f.symbol) for f in scan(tmp_path, Settings(jobs=1)).findings if f.rule == "cuda-flavour-package"]
    assert found == [(1, "torchac-cuda"), (2, "onnxruntime-genai-cuda")]

def test_plain_cupy_is_the_source_distribution(tmp_path: Path) -> None:
    """Plain cupy (pip's source distribution, conda-forge's CUDA build) is low: a ROCm build of it needs HIP set at
    install; the CUDA wheels stay with cupy-cuda-dependency and CuPy's ROCm wheel is quiet."""
    (tmp_path / "requirements.txt").write_text(
        "cupy>=13.0\ncupy-cuda12x==13.1.0\ncupy-rocm-7-0==14.2.0\ncupyx-helpers\n", encoding="utf-8")
    found = [(f.rule, f.line, f.severity.label) for f in scan(tmp_path, Settings(jobs=1)).findings
             if f.rule.startswith("cupy-")]
    assert found == [("cupy-source-dependency", 1, "low"), ("cupy-cuda-dependency", 2, "medium")]


def test_infer_config_sections_and_engine_files(tmp_path: Path) -> None:
    text = (
        "[property]\ngpu-id=0\n# model-engine-file=old.engine\nmodel-engine-file=m_b1_gpu0_fp16.engine\n"
        "network-mode=2\n\n[class-attrs-all]\npre-cluster-threshold=0.2\n"
        "[primary-gie]\nenable=1\nconfig-file=config_infer_primary.txt\ngie-unique-id=1\n"
        "[tracker]\nll-config-file=tracker.plan\n"
    )
    doc = _parse(tmp_path, "config_infer_primary.txt", FileKind.INFER_CONFIG, text)
    assert _items(doc, "fact") == [
        ("deepstream-infer", 1, 1, "property"),
        ("tensorrt-engine-file", 4, 1, "model-engine-file=m_b1_gpu0_fp16.engine"),
        ("deepstream-infer", 9, 1, "primary-gie"),
        ("tensorrt-engine-file", 14, 1, "ll-config-file=tracker.plan"),
    ]


def test_infer_config_without_nvinfer_keys_is_quiet(tmp_path: Path) -> None:
    doc = _parse(tmp_path, "infer.cfg", FileKind.INFER_CONFIG, "[property]\nname=x\nthreads=4\n")
    assert doc.manifest == []


def test_inferserver_protobuf_config(tmp_path: Path) -> None:
    text = (
        "# infer_config { in a comment\ninfer_config {\n  unique_id: 1\n  backend {\n    triton {\n"
        "      model_repo { root: \"../repo\" }\n    }\n  }\n}\ninput_control { process_mode: PROCESS_MODE_FULL_FRAME }\n"
    )
    doc = _parse(tmp_path, "dstest_ssd_triton.txt", FileKind.INFER_CONFIG, text)
    assert _items(doc, "fact") == [("deepstream-infer", 2, 1, "infer_config")]


def test_triton_model_config_names_its_backend(tmp_path: Path) -> None:
    text = (
        'name: "encoder"\nplatform: "tensorrt_plan"  # built by the export script\nmax_batch_size: 8\n'
        "parameters [\n  {\n    key: \"backend\"\n    value: { string_value: \"python\" }\n  }\n]\n"
        "# backend: \"onnxruntime\"\nbackend: 'onnxruntime'\n"
    )
    doc = _parse(tmp_path, "models/encoder/config.pbtxt", FileKind.INFER_CONFIG, text)
    # top-level keys only: a nested `key: "backend"` and a commented line are no backend
    assert _items(doc, "fact") == [("triton-backend", 2, 1, "tensorrt_plan"), ("triton-backend", 11, 1, "onnxruntime")]


def test_deepstream_yaml_config(tmp_path: Path) -> None:
    text = "property:\n  gpu-id: 0\n  onnx-file: m.onnx\n  model-engine-file: m.engine\nother:\n  file: notes.txt\n"
    doc = _parse(tmp_path, "configs/pgie.yml", FileKind.YAML, text)
    assert _items(doc, "fact") == [
        ("tensorrt-engine-file", 4, 22, "model-engine-file=m.engine"), ("deepstream-infer", 1, 1, "property"),
    ]


# --- discovery -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "kind"),
    [("common/make.config", FileKind.MAKEFILE), ("cuda/nw/Makefile_nvidia", FileKind.MAKEFILE),
     ("Makefile.cuda", FileKind.MAKEFILE), ("rules.make", FileKind.MAKEFILE), ("make.inc", FileKind.MAKEFILE),
     ("Makefile.in", FileKind.MAKEFILE), ("Makefile.am", FileKind.MAKEFILE), ("config/targets.mk.in", FileKind.MAKEFILE),
     ("setup.py.in", None), (".gitmodules", FileKind.GITMODULES), ("ros/detector/package.xml", FileKind.ROS_PACKAGE),
     ("web/package.json", None), ("pom.xml", FileKind.JVM_BUILD), ("app/build.gradle.kts", FileKind.JVM_BUILD),
     ("build.gradle", FileKind.JVM_BUILD), ("gradle.properties", None), ("configure.ac", FileKind.AUTOCONF),
     ("configure.in", FileKind.AUTOCONF), ("m4/ax_cuda.m4", FileKind.AUTOCONF), ("configure", None),
     ("src/App/App.csproj", FileKind.MSBUILD), ("Model.fsproj", FileKind.MSBUILD),
     ("configs/config_infer_primary_yoloV8.txt", FileKind.INFER_CONFIG),
     ("deepstream_app_config.txt", FileKind.INFER_CONFIG), ("dstest1_pgie_config.txt", FileKind.INFER_CONFIG),
     ("csrc/deepstream/config_yoloV8.txt", FileKind.INFER_CONFIG), ("DeepStream/app/labels.txt", FileKind.INFER_CONFIG),
     ("notes.txt", None), ("config.txt", None), ("docs/config_yolo.txt", None)],
)
def test_classify_fragments_and_configs(path: str, kind: FileKind | None) -> None:
    assert classify(path) == kind


# --- shell: variables that name images, variables a script reads --------------------------------


def test_assignment_naming_an_image_is_an_image() -> None:
    text = 'BASE_IMAGE="nvcr.io/nvidia/pytorch"\nexport SERVE=nvcr.io/nvidia/tritonserver:24.05-py3 N=2\nOUT=/tmp/x\n'
    assert _shell(text, "image") == [("nvcr.io/nvidia/pytorch", 1, 12), ("nvcr.io/nvidia/tritonserver:24.05-py3", 2, 14)]


@pytest.mark.parametrize(
    ("text", "image"),
    [("/netscratch/enroot/nvcr.io_nvidia_pytorch_22.02-py3.sqsh", "nvcr.io/nvidia/pytorch:22.02-py3"),
     ("nvidia+cuda+12.1.0-devel-ubuntu22.04.sqsh", "nvcr.io/nvidia/cuda:12.1.0-devel-ubuntu22.04"),
     ("/data/enroot/my_env.sqsh", None), ("nvcr.io/nvidia/nemo:24.05", "nvcr.io/nvidia/nemo:24.05"),
     ("/abs/dir:1", None), ("$IMAGE", None)],
)
def test_image_reference(text: str, image: str | None) -> None:
    assert image_reference(text) == image


def test_expansions_are_reads_outside_echo() -> None:
    text = (
        'gpu_list="${CUDA_VISIBLE_DEVICES:-0}"\n'
        'echo "using $CUDA_VISIBLE_DEVICES"\n'
        'if [ -n "$NVIDIA_VISIBLE_DEVICES" ]; then python t.py --gpus $CUDA_VISIBLE_DEVICES; fi\n'
        "printf '%s' $HOME\n"
        'CUDA_VISIBLE_DEVICES="$CUDA_VISIBLE_DEVICES" torchrun t.py\n'
        "ngpus=$(echo $CUDA_VISIBLE_DEVICES | tr ',' ' ' | wc -w)\n"
    )
    assert _shell(text, "env-read") == [
        ("CUDA_VISIBLE_DEVICES", 1, 10), ("NVIDIA_VISIBLE_DEVICES", 3, 9), ("CUDA_VISIBLE_DEVICES", 3, 62),
        ("CUDA_VISIBLE_DEVICES", 6, 14),
    ]


def test_pip_install_of_a_git_url_names_the_repository() -> None:
    text = "pip install ninja git+https://github.com/NVlabs/tiny-cuda-nn/#subdirectory=bindings/torch ./local\n"
    assert _shell(text, "package") == [("ninja", 1, 13), ("tiny-cuda-nn", 1, 19)]


def test_makefile_option_value_is_kept_whole(tmp_path: Path) -> None:
    text = "LDFLAGS = -L/usr/local/cuda/lib64 -lcudart\n"
    doc = _parse(tmp_path, "Makefile", FileKind.MAKEFILE, text)
    assert [(i.name, i.args) for i in doc.manifest if i.kind == "command"] == [("-L/usr/local/cuda/lib64", ("-lcudart",))]


# --- conda and requirements: local paths -------------------------------------------------------


def test_conda_pip_local_path_and_bad_line_leave_the_rest(tmp_path: Path) -> None:
    text = (
        "dependencies:\n  - cudatoolkit=11.6\n  - pip:\n    - submodules/simple-knn\n"
        "    - this is not a requirement\n    - GPUtil\n"
    )
    doc = _parse(tmp_path, "environment.yml", FileKind.CONDA, text)
    # the local directory is no package: it is the `pip install submodules/simple-knn` the pip list runs
    assert [(i.kind, i.name, i.line) for i in doc.manifest] == [("package", "cudatoolkit", 2), ("command", "pip", 4),
                                                                ("package", "gputil", 6)]
    assert len(doc.problems) == 1  # packaging words the reason; the line and the requirement are ours
    assert doc.problems[0].startswith("line 5 skipped: invalid requirement 'this is not a requirement': ")


# --- version bounds ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [("bitsandbytes==0.37.0", True), ("bitsandbytes", False), ("bitsandbytes>=0.41", False),
     ("bitsandbytes<0.45", True), ("bitsandbytes<0.49.0", True), ("bitsandbytes<=0.49.0", False),
     ("bitsandbytes~=0.41.1", True), ("bitsandbytes~=0.48", False), ("bitsandbytes==0.48.*", True),
     ("bitsandbytes==0.49.*", False), ("bitsandbytes ^0.37", True), ("bitsandbytes ^1.0", False),
     ("bitsandbytes 0.37.0", True), ("conda-forge::bitsandbytes=0.37", True), ("bitsandbytes>=0.37,<0.49", True),
     ('bitsandbytes[x]==0.40.0; python_version > "3.8"', True)],
)
def test_predates(value: str, expected: bool) -> None:
    assert predates(Item("package", "bitsandbytes", 1, 1, value=value), Version("0.49.0")) is expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [("bitsandbytes>=0.50.0.dev0", False), ("bitsandbytes>=0.49.0.post1,<0.51", False),
     ("bitsandbytes==0.50.0+rocm6.2", False), ("bitsandbytes==0.41.1+cu118", True), ("bitsandbytes==0.45.0rc1", True)],
)
def test_a_pre_release_or_local_tag_is_no_bound_of_its_own(value: str, expected: bool) -> None:
    # the digits of `.dev0` or `+cu118` are part of the version before them, never an exact pin `==0` / `==118`
    assert predates(Item("package", "bitsandbytes", 1, 1, value=value), Version("0.49.0")) is expected


def test_a_url_is_no_version_bound() -> None:
    url = "https://x.org/whl/cu118/bitsandbytes-0.37.0-py3-none-any.whl"
    assert not predates(Item("package", "bitsandbytes", 1, 1, value=url, url=url), Version("0.49.0"))


@pytest.mark.parametrize(
    ("matcher", "params", "message"),
    [("manifest-package", {"names": ["x"], "before": "soon"}, "'before' must be a version"),
     ("manifest-env", {"names": ["X"], "access": "write"}, "'access' must be one of set, read, any"),
     ("manifest-command", {"tools": ["cp"], "position": "first"}, "'position' must be one of any, last"),
     ("cmake-command", {"commands": ["if"], "needles": ["x"], "block_end": "yes"}, "'block_end' must be true or false")],
)
def test_new_parameters_are_validated(matcher: str, params: dict, message: str) -> None:
    found = get(matcher)
    assert found is not None and found.validate is not None
    with pytest.raises(ValueError, match=message):
        found.validate({"matcher": matcher, **params})


# --- whole scans ---------------------------------------------------------------------------------


def test_a_repository_installing_itself_is_no_dependency(tmp_path: Path) -> None:
    (tmp_path / "deepspeed").mkdir()
    (tmp_path / "deepspeed" / "__init__.py").write_text("")
    (tmp_path / "README.md").write_text("```bash\npip install deepspeed\npip install bitsandbytes==0.37.0\n```\n")
    found = [(f.path, f.line, f.rule) for f in scan(tmp_path, Settings(jobs=1)).findings]
    assert found == [("README.md", 3, "bitsandbytes-pre-rocm-pin")]


def test_arch_specific_sources_are_one_finding_per_file(tmp_path: Path) -> None:
    (tmp_path / "CMakeLists.txt").write_text(
        "add_library(k src/gemm_sm80.cu src/common.cu)\nlist(APPEND SRC csrc/gemm_4bit_sm80.cu)\n"
        "set(MORE src/attn_sm90a.cu)\n"
    )
    findings = [f for f in scan(tmp_path, Settings(jobs=1)).findings if f.rule == "arch-specific-sources"]
    assert [(f.line, [o.line for o in f.occurrences]) for f in findings] == [(1, [1, 2, 3])]


def test_a_cuda_switch_block_is_reported_where_it_opens_and_where_it_closes(tmp_path: Path) -> None:
    # the endif() of each if(CUDA_ENABLED) block is where a port writes else() or its own if(HIP_ENABLED) block
    (tmp_path / "CMakeLists.txt").write_text(
        "option(CUDA_ENABLED \"GPU matching\" ON)\n"
        "if(CUDA_ENABLED)\n  if(TESTS_ENABLED)\n    add_subdirectory(tests)\n  endif()\nendif()\n"
        "if(GUI_ENABLED)\n  add_subdirectory(gui)\nendif()\n"
        "if(MYLIB_USE_CUDA AND NOT WIN32)\n  add_subdirectory(gpu)\n"
    )
    findings = [f for f in scan(tmp_path, Settings(jobs=1)).findings if f.rule == "cmake-cuda-backend-switch"]
    # the last if() is never closed: its opening line alone
    assert [(f.line, [o.line for o in f.occurrences]) for f in findings] == [(1, [1, 2, 6, 10])]


def test_a_cuda_switch_may_name_the_toolkit_or_the_support(tmp_path: Path) -> None:
    # USE_CUDA_TOOLKIT / ENABLE_CUDA_SUPPORT choose the backend as USE_CUDA does; USE_CUDA_LTO is an option of it
    (tmp_path / "CMakeLists.txt").write_text(
        "option(USE_CUDA_LTO \"LTO\" OFF)\nif(USE_CUDA_TOOLKIT)\n  add_subdirectory(gpu)\nelse()\n  set(X 0)\nendif()\n"
        "if(ENABLE_CUDA_SUPPORT)\n  find_package(CUDAToolkit)\nendif()\nif(ENABLE_CUDA_DEBUG)\n  set(Y 1)\nendif()\n"
    )
    findings = [f for f in scan(tmp_path, Settings(jobs=1)).findings if f.rule == "cmake-cuda-backend-switch"]
    assert [(f.line, [o.line for o in f.occurrences]) for f in findings] == [(2, [2, 4, 6, 7, 9])]


def test_a_switch_that_builds_the_cuda_platform_library_chooses_the_backend(tmp_path: Path) -> None:
    # OpenMM and its plugins build each platform under <PREFIX>_BUILD_CUDA_LIB (OPENMM_BUILD_CUDA_LIB,
    # NN_BUILD_CUDA_LIB); HIP ports add <PREFIX>_BUILD_HIP_LIB after its endif(). A library path variable is not a switch
    (tmp_path / "CMakeLists.txt").write_text(
        "find_package(CUDA QUIET)\nset(FF_CUDA_LIB_DIR /opt/lib)\n"
        "IF(CUDA_FOUND)\n  SET(FF_BUILD_CUDA_LIB ON CACHE BOOL \"CUDA\")\nENDIF(CUDA_FOUND)\n"
        "IF(FF_BUILD_CUDA_LIB)\n  ADD_SUBDIRECTORY(platforms/cuda)\nENDIF(FF_BUILD_CUDA_LIB)\n"
    )
    findings = [f for f in scan(tmp_path, Settings(jobs=1)).findings if f.rule == "cmake-cuda-backend-switch"]
    assert [(f.line, [o.line for o in f.occurrences]) for f in findings] == [(4, [4, 6, 8])]


def test_a_cublas_switch_chooses_the_backend_as_a_cuda_switch_does(tmp_path: Path) -> None:
    # ggml's projects chose their GPU build with <PROJECT>_CUBLAS; ports added <PROJECT>_HIPBLAS beside it.
    # GGML_CUDA_FORCE_CUBLAS tunes a CUDA build, CUBLAS_LIBRARIES is a library list: neither is the switch
    (tmp_path / "CMakeLists.txt").write_text(
        "option(TRANSCRIBE_OPENBLAS \"BLAS\" OFF)\noption(TRANSCRIBE_CUBLAS \"GPU\" OFF)\n"
        "option(GGML_CUDA_FORCE_CUBLAS \"always cuBLAS\" OFF)\nset(CUBLAS_LIBRARIES cublas cublasLt)\n"
        "if(TRANSCRIBE_CUBLAS)\n  find_package(CUDAToolkit)\nendif()\nif(USE_CUBLAS_LT)\n  set(X 1)\nendif()\n"
    )
    findings = [f for f in scan(tmp_path, Settings(jobs=1)).findings if f.rule == "cmake-cuda-backend-switch"]
    assert [(f.line, [o.line for o in f.occurrences]) for f in findings] == [(2, [2, 5, 7])]


def test_a_cuda_branch_is_reported_where_the_next_branch_of_its_chain_begins(tmp_path: Path) -> None:
    # ports add elseif(USE_HIP) right after the CUDA branch, before the chain's other members and its else()
    (tmp_path / "CMakeLists.txt").write_text(
        "if(SOLVER_USE_CUDA)\n  enable_language(CUDA)\n  if(FAST)\n    set(X 1)\n  else()\n    set(X 0)\n  endif()\n"
        "elseif(SOLVER_USE_OPENCL)\n  add_subdirectory(cl)\nelse()\n  add_subdirectory(cpu)\nendif()\n"
        "if(SIM_DEVICE STREQUAL \"Cuda\")\n  add_subdirectory(gpu)\n"
        "elseif(SIM_DEVICE STREQUAL \"Tbb\")\n  add_subdirectory(tbb)\nendif()\n"
        "if(ONLY_CPU)\n  set(Y 1)\nelseif(SIM_DEVICE STREQUAL \"cuda\")\n  set(Y 2)\nelse()\n  set(Y 3)\nendif()\n"
    )
    findings = scan(tmp_path, Settings(jobs=1)).findings
    lines = {f.rule: [o.line for o in f.occurrences] for f in findings}
    # the nested else() (line 5) belongs to if(FAST): the CUDA branch ends at line 8
    assert lines["cmake-cuda-backend-switch"] == [1, 8, 12]
    assert lines["cmake-cuda-backend-value"] == [13, 15, 17, 20, 22, 24]


OPTIONAL_GROUPS = {
    "pyproject.toml": (
        '[project]\nname = "demo"\ndependencies = ["bitsandbytes==0.37.0"]\n\n'
        '[project.optional-dependencies]\ncu118 = ["bitsandbytes==0.41.1"]\n\n'
        '[dependency-groups]\ndev = ["bitsandbytes<0.45"]\n'
    ),
    "setup.py": (
        "from setuptools import setup\n\n"
        "setup(\n    install_requires=['bitsandbytes==0.37.0'],\n"
        "    extras_require={'int8': ['bitsandbytes==0.41.1']},\n)\n"
    ),
    "setup.cfg": (
        "[options]\ninstall_requires =\n    bitsandbytes==0.37.0\n\n"
        "[options.extras_require]\nint8 =\n    bitsandbytes==0.41.1\n"
    ),
}


@pytest.mark.parametrize("name", sorted(OPTIONAL_GROUPS))
def test_packages_of_optional_groups_are_optional_gaps_not_main_path_work(tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_text(OPTIONAL_GROUPS[name])
    found = [(f.line, f.status) for f in scan(tmp_path, Settings(jobs=1)).findings if f.rule == "bitsandbytes-pre-rocm-pin"]
    required, *extras = found
    assert required[1] == "remaining"
    assert extras and all(status == "optional-gap" for _, status in extras)


# --- source builds that land in a ROCm environment -----------------------------------------------


def _severities(root: Path, rules: set[str]) -> list[tuple[str, int, str, str]]:
    result = scan(root, Settings(jobs=1))
    return sorted((f.path, f.line, f.rule, f.severity.label) for f in (*result.findings, *result.guarded_findings)
                  if f.rule in rules)


def test_source_builds_in_a_rocm_image_or_after_rocm_torch_are_info(tmp_path: Path) -> None:
    (tmp_path / "rocm").mkdir()
    (tmp_path / "cuda").mkdir()
    (tmp_path / "rocm" / "Dockerfile").write_text(
        "ARG BASE=rocm/pytorch:rocm6.4_ubuntu22.04_py3.10_pytorch_release_2.6.0\nFROM ${BASE}\n"
        "RUN pip install flash-attn --no-build-isolation\n"
        "RUN pip install https://example.org/flash_attn-2.6.3+cu123torch2.4-cp310-cp310-linux_x86_64.whl\n")
    (tmp_path / "cuda" / "Dockerfile").write_text(
        "FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\nRUN pip install flash-attn mamba-ssm\n")
    (tmp_path / "env.sh").write_text(
        "pip install torch --index-url https://download.pytorch.org/whl/rocm6.4\npip install mamba-ssm\n")
    (tmp_path / "cuda_env.sh").write_text(
        "pip install torch --index-url https://download.pytorch.org/whl/cu124\npip install mamba-ssm\n")
    assert _severities(tmp_path, {"flash-attn-dependency", "mamba-ssm-dependency"}) == [
        ("cuda/Dockerfile", 2, "flash-attn-dependency", "medium"),
        ("cuda/Dockerfile", 2, "mamba-ssm-dependency", "medium"),
        ("cuda_env.sh", 2, "mamba-ssm-dependency", "medium"),
        ("env.sh", 2, "mamba-ssm-dependency", "info"),
        ("rocm/Dockerfile", 3, "flash-attn-dependency", "info"),
        ("rocm/Dockerfile", 4, "flash-attn-dependency", "medium"),  # a prebuilt CUDA wheel stays one
    ]



# --- sources that PyTorch's hipify renames to one object -----------------------------------------


def test_hipified_name_clash_severity_follows_the_binding(tmp_path: Path) -> None:
    """X.cpp and X_cuda.cu both become X_hip.* on ROCm: medium where the binding holds a CUDA name (hipify rewrites
    and renames it), low where it holds none or is not there; a name or folder that stays apart is quiet."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "ball.cpp").write_text("#include <torch/extension.h>\nat::cuda::CUDAGuard g(dev);\n")
    (tmp_path / "src" / "plain.cpp").write_text("#include <torch/extension.h>\nint f();\n")
    (tmp_path / "setup.py").write_text(
        "from torch.utils.cpp_extension import CUDAExtension\n"
        "ext = [CUDAExtension('a', ['src/ball.cpp', 'src/ball_cuda.cu']),\n"
        "       CUDAExtension('b', ['src/plain.cpp', 'src/plain_cuda.cu']),\n"
        "       CUDAExtension('c', ['src/gone.cpp', 'src/gone_cuda.cu']),\n"
        "       CUDAExtension('d', ['src/roi_ext.cpp', 'src/roi_cuda.cu', 'x/y.cpp', 'x/cuda/y_cuda.cu']),\n"
        "       CUDAExtension('e', ['src/k_cuda.cpp', 'src/k_cuda.cu'])]\n"
        "# CUDAExtension('f', ['src/ball.cpp', 'src/ball_cuda.cu'])\n"
    )
    result = scan(tmp_path, Settings(jobs=1))
    found = [(f.line, f.severity.name.lower(), f.symbol) for f in result.findings if f.rule == "hipified-source-name-clash"]
    assert found == [(2, "medium", "ball_cuda.cu"), (3, "low", "plain_cuda.cu"), (4, "low", "gone_cuda.cu")]


def test_hipified_name_clash_never_reads_a_binding_outside_the_repository(tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "ball.cpp").write_text("at::cuda::CUDAGuard g(dev);\n")
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "setup.py").write_text(
        "from torch.utils.cpp_extension import CUDAExtension\n"
        "ext = [CUDAExtension('a', ['../outside/ball.cpp', '../outside/ball_cuda.cu'])]\n")
    result = scan(tmp_path / "repo", Settings(jobs=1))
    assert [(f.line, f.severity.name.lower()) for f in result.findings if f.rule == "hipified-source-name-clash"] == [
        (2, "low")]


@pytest.mark.parametrize("url, fires", [
    ("https://download.pytorch.org/whl/${TORCH_CUDA}", True), ("https://download.pytorch.org/whl/$CU_TAG", True),
    ("https://download.pytorch.org/whl/${TORCH_CUDA:-cu126}", True), ("https://download.pytorch.org/whl/nightly/${cuda}", True),
    ("https://download.pytorch.org/whl/${TORCH_VARIANT}", False), ("https://download.pytorch.org/whl/${CUSTOM_INDEX}", False),
    ("https://download.pytorch.org/whl/rocm6.2", False),
])
def test_pytorch_index_tag_from_a_cuda_variable(tmp_path: Path, url: str, fires: bool) -> None:
    """The whole wheel tag may come from a variable: one named for CUDA holds a cuXXX tag (`ARG TORCH_CUDA=cu129`)."""
    (tmp_path / "install.sh").write_text(f"pip install torch --index-url {url}\n", encoding="utf-8")
    found = [f.line for f in scan(tmp_path, Settings(jobs=1)).findings if f.rule == "pytorch-cuda-index"]
    assert found == ([1] if fires else [])


def test_conda_environment_in_a_folder_of_environments_lists_the_toolkit_components(tmp_path: Path) -> None:
    """An environment file named for its variant (conda/environments/all_cuda-*.yaml) is read as conda; the CUDA
    toolkit's component packages are occurrences of the one conda-cuda-package finding; CuPy and NumPy are not."""
    folder = tmp_path / "conda" / "environments"
    folder.mkdir(parents=True)
    (folder / "all_cuda-12_arch-x86_64.yaml").write_text(
        "channels:\n- conda-forge\ndependencies:\n- cuda-version=12.9\n- libcufile-dev\n- libnvjpeg-dev\n"
        "- libnpp\n- numpy>=2.0\n- libnvimgcodec>=0.8\n", encoding="utf-8")
    found = [f for f in scan(tmp_path, Settings(jobs=1)).findings if f.rule == "conda-cuda-package"]
    assert [(f.path, f.line, [o.line for o in f.occurrences]) for f in found] == [
        ("conda/environments/all_cuda-12_arch-x86_64.yaml", 4, [4, 5, 6, 7, 9])]


def test_apex_cuda_extension_builds_in_install_steps(tmp_path: Path) -> None:
    (tmp_path / "install.sh").write_text(
        "git clone https://github.com/NVIDIA/apex\ncd apex\n"
        "pip install -v --global-option=\"--cpp_ext\" --global-option=\"--cuda_ext\" ./\n"
        "python setup.py install --cuda_ext\npip install -v ./\n"
        "git clone https://github.com/ROCm/apex && pip install --global-option=\"--cuda_ext\" ./apex\n",
        encoding="utf-8")
    result = scan(tmp_path, Settings(jobs=1))
    assert [(f.line, f.severity.label) for f in result.findings if f.rule == "apex-cuda-ext-build"] == [
        (3, "medium"), (4, "medium")]


def test_flash_attention_submodule_unless_amds_port(tmp_path: Path) -> None:
    (tmp_path / ".gitmodules").write_text(
        '[submodule "fa"]\n\tpath = fa\n\turl = https://github.com/Dao-AILab/flash-attention\n'
        '[submodule "fa-rocm"]\n\tpath = fa-rocm\n\turl = https://github.com/ROCm/flash-attention.git\n',
        encoding="utf-8")
    found = [(f.line, f.rule, f.severity.label) for f in scan(tmp_path, Settings(jobs=1)).findings]
    assert found == [(3, "flash-attn-submodule", "medium")]


def test_hardware_queue_variable_in_launch_scripts(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text(
        "export CUDA_DEVICE_MAX_CONNECTIONS=1\nexport GPU_MAX_HW_QUEUES=2\necho CUDA_DEVICE_MAX_CONNECTIONS\n",
        encoding="utf-8")
    found = [(f.line, f.rule, f.severity.label) for f in scan(tmp_path, Settings(jobs=1)).findings
             if f.rule == "cuda-device-max-connections-env"]
    assert found == [(1, "cuda-device-max-connections-env", "low")]


def test_a_cutlass_subproject_is_one_medium_finding_per_cmake_file(tmp_path: Path) -> None:
    (tmp_path / "CMakeLists.txt").write_text(
        "add_subdirectory(third-party/cutlass)\ninclude_directories(third-party/cutlass/tools/util/include)\n"
        "include_directories(third-party/composable_kernel/include)\nmessage(STATUS \"cutlass/include\")\n"
    )
    findings = [f for f in scan(tmp_path, Settings(jobs=1)).findings if f.rule == "cmake-cutlass-subproject"]
    assert [(f.line, f.severity.label, [o.line for o in f.occurrences]) for f in findings] == [(1, "medium", [1, 2])]


def test_nccl_forks_and_the_hadamard_extension_are_cuda_only_submodules(tmp_path: Path) -> None:
    (tmp_path / ".gitmodules").write_text(
        '[submodule "msccl"]\n\tpath = third_party/msccl\n\turl = https://github.com/Azure/msccl-executor-nccl\n'
        '[submodule "fht"]\n\tpath = fht\n\turl = https://github.com/Dao-AILab/fast-hadamard-transform.git\n'
        '[submodule "tools"]\n\tpath = tools\n\turl = https://github.com/microsoft/msccl-tools.git\n',
        encoding="utf-8")
    found = [(f.line, f.rule, f.severity.label) for f in scan(tmp_path, Settings(jobs=1)).findings]
    assert found == [(3, "cuda-only-submodule", "medium"), (6, "cuda-only-submodule", "medium")]


def test_install_steps_inside_quoted_notes_are_read_with_file_columns(tmp_path: Path) -> None:
    """A fence inside a block quote (GitHub's `> **Note**` and `> [!TIP]` boxes, a list item in one) is an install
    step like any other; a quoted sentence and a quoted non-shell fence stay prose."""
    (tmp_path / "README.md").write_text(
        "> **Note:** GPU wheels:\n> ```bash\n> pip install torch --index-url https://download.pytorch.org/whl/cu121\n"
        "> ```\n\n> 1. then:\n>    ```sh\n>    pip install flash-attn --no-build-isolation\n>    ```\n\n"
        "> A sentence: pip install flash-attn is what the old guide did.\n\n"
        "> ```python\n> x = 'pip install torch --index-url https://download.pytorch.org/whl/cu121'\n> ```\n",
        encoding="utf-8")
    found = [(f.line, f.column, f.rule) for f in scan(tmp_path, Settings(jobs=1)).findings]
    assert found == [(3, 33, "pytorch-cuda-index"), (8, 18, "flash-attn-dependency")]


def test_trtllm_commands_are_blockers_and_mentions_are_not(tmp_path: Path) -> None:
    (tmp_path / "serve.sh").write_text(
        "trtllm-build --checkpoint_dir ckpt --output_dir engines\necho trtllm-build done\n"
        "trtllm-bench --model engines throughput\n", encoding="utf-8")
    found = [(f.line, f.rule, f.severity.label) for f in scan(tmp_path, Settings(jobs=1)).findings]
    assert found == [(1, "trtllm-cli-call", "blocker"), (3, "trtllm-cli-call", "blocker")]


def test_image_tag_spelled_from_a_cuda_release_argument(tmp_path: Path) -> None:
    """The file's text names neither `cuda` nor `cu12`: only the expanded tag (cu12.6-full) says CUDA."""
    (tmp_path / "Dockerfile").write_text(
        "ARG TORCH_CU=12.6\nARG KIND=full\nFROM owner/torch-base:cu${TORCH_CU}-${KIND}\nFROM owner/torch-base:${KIND}\n",
        encoding="utf-8")
    found = [(f.line, f.rule, f.severity.label) for f in scan(tmp_path, Settings(jobs=1)).findings]
    assert found == [(3, "cuda-tagged-image", "medium")]


def test_prebuilt_binary_named_for_a_cuda_release(tmp_path: Path) -> None:
    """One finding per file for the binaries a version table names; a ROCm build, a CPU build, a wheel and a
    sentence stay quiet."""
    (tmp_path / "ops.py").write_text(
        "LIBS = {'2.4': 'libattn-torch2.4-cu121.cpython-311-x86_64-linux-gnu.so',\n"
        "        '2.6': 'libattn-torch2.6-cu124.cpython-311-x86_64-linux-gnu.so'}\n"
        "ROCM = 'libattn-torch2.6-rocm6.2.cpython-311-x86_64-linux-gnu.so'\nCPU = 'libattn_cpu.so'\n"
        "WHEEL = 'attn-1.0+cu121-cp311-cp311-linux_x86_64.whl'\nNOTE = 'the cu121 .so needs torch 2.4'\n",
        encoding="utf-8")
    findings = [f for f in scan(tmp_path, Settings(jobs=1)).findings]
    assert [(f.line, f.rule, f.severity.label, [o.line for o in f.occurrences]) for f in findings] == [
        (1, "python-cuda-prebuilt-library", "high", [1, 2])]


def test_functions_that_forward_their_arguments_to_pip_are_installs() -> None:
    """A call of a function that runs `pip install "$@"` (directly, through a venv's pip, `python -m pip`, or another
    such function) is read as `pip install ARGS`; a function forwarding to apt, or pip with fixed arguments, is not."""
    text = (
        'quiet() {\n    out=$(python -m pip install "$@" 2>&1) || { echo "$out"; }\n}\n'
        'vpip() { "$VENV/bin/pip" install -q "${@}"; }\n'
        'retry() {\n  for i in 1 2; do vpip "$@" && return 0; done\n}\n'
        'apt_i() {\n  apt-get install -y "$@"\n}\n'
        'fixed() {\n  pip install numpy\n}\n'
        'quiet torch --index-url https://download.pytorch.org/whl/cu126\n'
        'retry xformers --extra-index-url https://download.pytorch.org/whl/cu121\n'
        'apt_i cuda-toolkit\nfixed --index-url https://download.pytorch.org/whl/cu118\n'
    )
    assert installer_functions(text) == frozenset({"quiet", "vpip", "retry"})
    assert _shell(text, "index") == [("https://download.pytorch.org/whl/cu126", 14, 25),
                                     ("https://download.pytorch.org/whl/cu121", 15, 34)]
    assert [item for item in _shell(text, "package") if item[1] > 13] == [("torch", 14, 7), ("xformers", 15, 7)]


def test_install_steps_that_select_a_cuda_extra(tmp_path: Path) -> None:
    (tmp_path / "setup.sh").write_text(
        'pip install -e ".[cu129]"\nuv sync --extra cu128\nuv sync --extra=cu126\npython -m pip install "kit[dev,cu121]"\n'
        'pip install -e ".[cpu]"\nuv sync --extra rocm6.4\npython train.py cu121\n', encoding="utf-8")
    found = [(f.line, f.rule, f.severity.label) for f in scan(tmp_path, Settings(jobs=1)).findings]
    assert found == [(1, "cuda-extra-install", "low"), (2, "cuda-extra-install", "low"),
                     (3, "cuda-extra-install", "low"), (4, "cuda-extra-install", "low")]


def test_commands_in_the_conditions_of_compound_commands(tmp_path: Path) -> None:
    """`if ! pip install X; then`, `elif nvidia-smi`, `while`/`until` conditions run their command like any line."""
    (tmp_path / "gpu.sh").write_text(
        'if ! pip install xformers; then echo no; fi\nif [ -n "$X" ]; then :\nelif nvidia-smi -L; then :; fi\n'
        'until nvidia-smi; do sleep 1; done\necho "if pip install xformers"\n', encoding="utf-8")
    found = [(f.line, f.rule) for f in scan(tmp_path, Settings(jobs=1)).findings if f.severity.label != "info"]
    assert found == [(1, "xformers-dependency"), (3, "nvidia-smi-call"), (4, "nvidia-smi-call")]
def test_ollama_image_without_its_rocm_tag(tmp_path: Path) -> None:
    (tmp_path / "docker-compose.yml").write_text(
        "services:\n  llm:\n    image: ollama/ollama:latest\n  amd:\n    image: ollama/ollama:rocm\n"
        "  cpu:\n    image: ollama/ollama\n  ui:\n    image: ghcr.io/org/ollama-ui:main\n", encoding="utf-8")
    found = scan(tmp_path, Settings(jobs=1)).findings
    assert [(f.rule, f.line, f.severity.label) for f in found if f.rule == "ollama-cuda-image"] == [
        ("ollama-cuda-image", 3, "low"), ("ollama-cuda-image", 7, "low")]
