"""Pickling what `wrap` returns gives the script's own objects, without the helper.

The helper times the optimizer through a subclass of the optimizer's class made at `wrap`, and
the model through hooks and a few attributes of the instance (its forward hooks, `zero_grad`,
`register_comm_hook`), all closures over the session. None of those can be pickled: a script
that saves the whole object (`torch.save(model)`, `torch.save(optimizer)`) or copies it
(`copy.deepcopy`) failed under the helper alone. `make_picklable` gives the instance a class of
its own, a subclass of its class, whose pickled form is the original class's with the helper's
hooks and attributes left out: what the script gets back has never been wrapped, and loading it
needs no stepscope.
"""
import copyreg
from collections import OrderedDict

# The module's dictionaries of forward hooks, keyed by the ids of their handles.
_HOOK_DICTS = ("_forward_pre_hooks", "_forward_hooks")


def make_picklable(obj, methods=None, attrs=(), hook_ids=()):
    """Sets `obj`'s class to a subclass of its class with `methods` (name: function) and a
    `__reduce_ex__` that pickles it as an instance of its class, less the instance attributes
    named in `attrs` and the forward hooks whose handles' ids are in `hook_ids` (a set, which
    the caller may add to later)."""
    base = type(obj)

    def __reduce_ex__(self, protocol):
        getstate = getattr(base, "__getstate__", None)
        state = dict(getstate(self) if getstate is not None else vars(self))
        for name in attrs:
            state.pop(name, None)
        for name in _HOOK_DICTS:
            hooks = state.get(name)
            if hooks:
                state[name] = OrderedDict((k, v) for k, v in hooks.items() if k not in hook_ids)
        # object.__new__(base), then base's __setstate__ (or the dict updated) with the state:
        # how pickle's own first protocols rebuild an instance.
        return copyreg._reconstructor, (base, object, None), state

    body = dict(methods or {}, __reduce_ex__=__reduce_ex__, __qualname__=base.__qualname__,
                __module__=base.__module__)
    obj.__class__ = type(base.__name__, (base,), body)
    return obj
