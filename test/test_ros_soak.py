"""Short soak (make test): simulator + adaptive controller, closed loop over real DDS at
1 kHz of simulated time (test/soak.py; ``make soak`` runs 600 s of it). Nothing non-finite
reaches the simulator, memory does not grow, the tracking error stays bounded and shrinks."""
import ros_fixtures  # noqa: F401  (isolates DDS before rclpy starts)
from ros_fixtures import DOMAIN_ID

import soak

SIM_SECONDS = 5.0


def test_short_soak_is_finite_bounded_and_does_not_leak():
    out = soak.soak(SIM_SECONDS, 1000.0, domain_id=DOMAIN_ID)
    print("soak %.0f s sim in %.1f s wall: %.0f steps/s, step period p50 %.2f ms, p99 %.2f "
          "ms, p99.9 %.2f ms; RSS %+.2f%%; tracking RMS %.4f -> %.4f rad (max %.4f); "
          "guard %s" % (out["sim_seconds"], out["wall_s"], out["loop_rate_hz"],
                        out["period_ms_p50"], out["period_ms_p99"], out["period_ms_p999"],
                        out["rss_growth_pct"], out["rms_first_s"], out["rms_last_s"],
                        out["max_abs_error_rad"], out["guard"]))
    assert out["nonfinite_commands"] == 0 and out["nonfinite_states"] == 0
    assert out["lockstep_misses"] == 0 and out["dropped"] == 0
    assert out["guard"]["commands"] == int(SIM_SECONDS * 1000)
    assert out["guard"]["timeouts"] == 0 and out["guard"]["refused_nonfinite"] == 0
    assert out["rss_growth_pct"] < 5.0
    assert out["max_abs_error_rad"] < 0.1
    assert out["rms_last_s"] < 0.5 * out["rms_first_s"]
