"""The CLI's other JSON documents as results load() reads: leakage's ablations, probe's position probes and
theory's closed forms (no Python call makes them; maskscope-cli does). Each keeps its document as data:
picklable, ==, to_dict() the file, to_dataframe() its table."""

from __future__ import annotations

import json
from typing import Any, Dict, List

from ._data import Data, register, to_json
from ._results import _need_pandas


class Document(Data):
    """A JSON document of maskscope-cli kept as it is: ``to_dict()`` gives it back, ``data`` reads it."""

    _doc: Dict[str, Any]

    @classmethod
    def _from_json(cls, doc: Dict[str, Any]) -> "Document":
        return cls._made(_doc=doc)

    def _state(self) -> Any:
        return self._doc

    @classmethod
    def _from_state(cls, state: Any) -> "Document":
        return cls._from_json(state)

    @property
    def data(self) -> Dict[str, Any]:
        """The document as Python objects (a copy)."""
        return self.to_dict()

    def to_dict(self) -> Dict[str, Any]:
        """The JSON the CLI wrote, as Python objects."""
        return json.loads(json.dumps(to_json(self._doc)))

    def _rows(self) -> List[Dict[str, Any]]:
        return [{k: v for k, v in layer.items() if not isinstance(v, (list, dict))}
                for layer in self._doc.get("layers", [])]

    def to_dataframe(self) -> Any:
        """The document's table (one row per layer; per layer and feature for a probe; per position for theory).

        Raises
        ------
        ImportError
            pandas is not installed.
        """
        pd = _need_pandas()
        rows = self._rows()
        frame = pd.DataFrame(rows)
        return frame.set_index("layer") if "layer" in frame.columns else frame

    def __repr__(self) -> str:
        return f"<maskscope.{type(self).__name__} {', '.join(sorted(self._doc))}>"


@register("leakage", lambda doc: "ablations" in doc and "layers" in doc)
class LeakageResult(Document):
    """``maskscope-cli leakage``'s JSON: per layer the baseline's and each ablation's leakage, and the shares."""


@register("probe", lambda doc: "probe" in doc and "layers" in doc)
class ProbeResult(Document):
    """``maskscope-cli probe``'s JSON: per layer and feature (x, var, sim) the probe's Pearson r and NRMSE."""

    def _rows(self) -> List[Dict[str, Any]]:
        rows = []
        for layer in self._doc["layers"]:
            for feature, score in layer.items():
                if isinstance(score, dict):
                    rows.append({"layer": layer["layer"], "feature": feature, **score})
        return rows

    def to_dataframe(self) -> Any:
        return super().to_dataframe().set_index("feature", append=True)


@register("theory", lambda doc: "kind" in doc and "source" in doc and "layers" not in doc)
class TheoryResult(Document):
    """``maskscope-cli theory``'s JSON: a closed form's curve or matrix and its parameters."""

    def _rows(self) -> List[Dict[str, Any]]:
        lists = {k: v for k, v in self._doc.items() if isinstance(v, list) and v and not isinstance(v[0], list)}
        length = max((len(v) for v in lists.values()), default=0)
        return [{k: v[i] for k, v in lists.items() if len(v) == length} for i in range(length)]
