import pytest
from cuda_sim import simulate


@pytest.fixture
def sim():
    """Run the test body under the simulation (restored afterwards)."""
    with simulate():
        yield
