"""Griffe extension for the docs site: Sphinx cross-reference roles in jittape's docstrings.

jittape's docstrings are numpydoc and name other objects with Sphinx roles
(``:func:`value_and_grad```, ``:class:`jittape.Tape```, ``:mod:`jittape.sweeps.opsets```). Markdown
has no roles, so this extension rewrites each one, once the package is loaded, into an
optional mkdocs-autorefs cross-reference to the object's canonical path: a link where the
site documents the object, plain code where it does not (internal modules). A name is
looked up as written, then relative to the docstring's class and module, then under
``jittape``. It also drops the private keyword parameters (``_val=None``: internal
fast paths) from the signatures shown. Loaded by ``mkdocs.yml`` (``extensions``); the
package is never imported.
"""

import re

from griffe import AliasResolutionError, Extension

ROLE = re.compile(r":(?:py:)?(?:func|class|meth|mod|data|attr|exc|obj):`~?([^`]+)`")


class SphinxRoles(Extension):
    def on_package(self, *, pkg, loader, **kwargs):
        collection = loader.modules_collection
        for obj in _objects(pkg):
            doc = obj.docstring
            if doc is not None and ":" in doc.value:
                doc.value = ROLE.sub(lambda m: _link(m.group(1), obj, collection), doc.value)
            if obj.is_function:
                for name in [p.name for p in obj.parameters if p.name.startswith("_")]:
                    del obj.parameters[name]


def _objects(obj):
    yield obj
    for member in obj.members.values():
        if not member.is_alias:
            yield from _objects(member)


def _link(target, obj, collection):
    name = target.removesuffix("()").lstrip(".")
    scopes = [obj] + [p for p in _parents(obj) if p.is_class or p.is_module]
    for path in [name] + [f"{s.path}.{name}" for s in scopes] + [f"jittape.{name}"]:
        try:
            found = collection[path]
            canonical = found.canonical_path
        except (KeyError, AliasResolutionError, ValueError):
            continue
        return (f'<autoref identifier="{canonical}" optional><code>{target}</code>'
                f"</autoref>")
    return f"`{target}`"


def _parents(obj):
    while obj.parent is not None:
        obj = obj.parent
        yield obj
