"""torch.optim.optimizer: an Optimizer whose step() runs the global post hooks."""

import torch

_POST_HOOKS = []


def register_optimizer_step_post_hook(hook):
    _POST_HOOKS.append(hook)
    return hook


class Optimizer:
    def step(self):
        torch.STEPS += 1
        for hook in list(_POST_HOOKS):
            hook(self, (), {})
