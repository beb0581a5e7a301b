"""Figure output shared by the example scripts (matplotlib, Agg, PNG)."""
import os


def save(fig, outdir, name):
    """Write ``fig`` as ``outdir/name`` and close it; returns the path."""
    import matplotlib.pyplot as plt
    path = os.path.join(outdir, name)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
