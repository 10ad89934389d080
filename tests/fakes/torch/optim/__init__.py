from torch.optim.optimizer import Optimizer  # noqa: F401
