"""normlab.machine() against `normlab --version`: the same CPU and kernels."""

import normlab
from conftest import normlab_cli


def test_machine_matches_the_program():
    info = normlab.machine()
    assert set(info) == {"cpu", "family", "model", "avx2_fma", "avx512", "build_arch", "products",
                         "openblas", "openblas_core"}
    version = normlab_cli("--version")
    assert f"cpu: {info['cpu']} (family {info['family']}, model {info['model']};" in version
    assert f"products: normlab's own, {info['products']} " in version
    assert f"core {info['openblas_core']} " in version
    # AVX-512 implies AVX2 and FMA; a binary with vector tiles needs a CPU that has them.
    assert not info["avx512"] or info["avx2_fma"]
    assert info["products"].startswith("scalar") or info["avx2_fma"]
