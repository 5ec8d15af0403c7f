"""The demo: a small CNN trained on the UCI handwritten digits (shipped with lucid).

``python -m lucid.demo`` trains it with Adam and a one-cycle learning-rate schedule, shows
a progress bar per epoch, evaluates on the held-out split, saves a checkpoint, reloads it
into a fresh model and checks the reloaded accuracy is identical.
"""

from .train import DigitsNet, evaluate, main, train

__all__ = ["DigitsNet", "train", "evaluate", "main"]
