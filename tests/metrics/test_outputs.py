"""Output normalization: every accepted shape, every refused one."""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_ragproof.errors import OutputShapeError
from pytest_ragproof.metrics import Context, PipelineOutput, content_id, normalize_output

SECRET = "s3cr3t-answer-text"


def _sha16(text: str) -> str:
    return hashlib.sha256(unicodedata.normalize("NFC", text).encode()).hexdigest()[:16]


@dataclass
class LangChainDoc:
    page_content: str
    metadata: dict[str, Any] = field(default_factory=dict)
    id: str | None = None


@dataclass
class TextNode:
    node_id: str
    text: str
    metadata: dict[str, Any] = field(default_factory=dict)

    def get_content(self) -> str:
        return self.text


@dataclass
class NodeWithScore:
    node: object
    score: float | None = None


def test_string_is_answer_only() -> None:
    assert normalize_output("Paris") == PipelineOutput("Paris", None)


def test_content_id_is_sha256_of_nfc_text() -> None:
    assert content_id("café") == _sha16("café")
    assert content_id("cafe\u0301") == content_id("café")
    assert len(content_id("")) == 16


def test_mapping_with_string_contexts() -> None:
    out = normalize_output({"answer": "Paris", "contexts": ["one", "two"]})
    assert out.answer == "Paris"
    assert out.contexts is not None
    assert [c.id for c in out.contexts] == [_sha16("one"), _sha16("two")]
    assert [c.document_id for c in out.contexts] == [c.id for c in out.contexts]


def test_response_and_retrieved_contexts_aliases() -> None:
    out = normalize_output({"response": "x", "retrieved_contexts": []})
    assert out == PipelineOutput("x", ())


def test_object_with_attributes() -> None:
    out = normalize_output(SimpleNamespace(answer="x", contexts=("t",)))
    assert out.contexts is not None
    assert out.contexts[0].text == "t"


def test_missing_or_none_contexts_mean_no_retrieval() -> None:
    assert normalize_output({"answer": "x"}).contexts is None
    assert normalize_output({"answer": "x", "contexts": None}).contexts is None
    assert normalize_output({"contexts": []}) == PipelineOutput(None, ())


def test_mapping_contexts() -> None:
    out = normalize_output(
        {
            "answer": "x",
            "contexts": [
                {"id": "c1", "text": "t1", "metadata": {"document_id": "d1"}, "score": 0.5},
                {"text": "t2"},
                {"id": "c3", "text": "t3", "metadata": None},
            ],
        }
    )
    assert out.contexts == (
        Context("c1", "t1", "d1", 0.5),
        Context(_sha16("t2"), "t2", _sha16("t2")),
        Context("c3", "t3", "c3"),
    )
    assert out.contexts[0].metadata == {"document_id": "d1"}


def test_context_metadata_is_a_frozen_copy() -> None:
    meta = {"document_id": "d1"}
    out = normalize_output({"contexts": [{"id": "c", "text": "t", "metadata": meta}]})
    meta["document_id"] = "changed"
    assert out.contexts is not None
    assert out.contexts[0].metadata["document_id"] == "d1"
    with pytest.raises(TypeError):
        out.contexts[0].metadata["x"] = 1  # type: ignore[index]


def test_langchain_documents() -> None:
    docs = [
        LangChainDoc("t1", {"id": "c1", "document_id": "guide.md"}),
        LangChainDoc("t2", {"source": "x"}, id="lc-2"),
        LangChainDoc("t3"),
    ]
    out = normalize_output({"answer": "x", "contexts": docs})
    assert out.contexts is not None
    assert [(c.id, c.document_id) for c in out.contexts] == [
        ("c1", "guide.md"),
        ("lc-2", "x"),  # LangChain loaders name the document in metadata["source"]
        (_sha16("t3"), _sha16("t3")),
    ]


def test_llamaindex_nodes_with_score() -> None:
    nodes = [
        NodeWithScore(TextNode("n1", "t1", {"document_id": "d"}), 0.9),
        NodeWithScore(SimpleNamespace(node_id="n2", text="t2", metadata={}), None),
    ]
    out = normalize_output(SimpleNamespace(response="x", source=None, contexts=nodes))
    assert out.contexts == (Context("n1", "t1", "d", 0.9), Context("n2", "t2", "n2", None))


def test_pipeline_output_passes_through() -> None:
    ready = PipelineOutput("x", ())
    assert normalize_output(ready) is ready


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (42, "pipeline output: expected a string"),
        (None, "pipeline output: expected a string"),
        (b"bytes", "pipeline output: expected a string"),
        ([SECRET], "pipeline output: expected a string"),
        ({"text": SECRET}, "pipeline output: a dict with keys 'text' is not a recognised"),
        (
            SimpleNamespace(foo=SECRET),
            "pipeline output: a SimpleNamespace with attributes 'foo' is not a recognised "
            "shape; expected a string",
        ),
        ({"answer": 3}, "answer: expected a string or None, got int"),
        ({"answer": [SECRET]}, "answer: expected a string or None, got list"),
        ({"answer": "x", "contexts": SECRET}, "contexts: expected a list"),
        ({"answer": "x", "contexts": {"id": SECRET}}, "contexts: expected a list"),
        ({"answer": "x", "contexts": 7}, "contexts: expected a list"),
        ({"contexts": [3]}, "context 1 (1-based): expected a string; a mapping"),
        ({"contexts": ["ok", object()]}, "context 2 (1-based): an object with no attributes"),
        (
            {"contexts": [{"id": "c", SECRET[:3]: SECRET}]},
            "a mapping with keys 'id', 's3c' has no text under 'text', 'content' or "
            "'page_content'; expected a string",
        ),
        ({"contexts": [{"content": None}]}, "'content': expected a string, got NoneType"),
        ({"contexts": [{"text": SECRET, "id": 5}]}, "'id': expected a string, got int"),
        ({"contexts": [{"text": "t", "metadata": [SECRET]}]}, "metadata: expected a mapping"),
        ({"contexts": [{"text": "t", "score": "high"}]}, "score: expected a finite number"),
        ({"contexts": [{"text": "t", "score": float("nan")}]}, "score: expected a finite"),
        ({"contexts": [{"text": "t", "score": True}]}, "score: expected a finite number"),
        (
            {"contexts": [{"text": "t", "metadata": {"document_id": 9}}]},
            "'document_id': expected a string, got int",
        ),
        ({"contexts": [LangChainDoc(None)]}, "page_content: expected a string"),  # type: ignore[arg-type]
        (
            {"contexts": [NodeWithScore(SimpleNamespace(node_id="n", text=None))]},
            "node.text: expected a string",
        ),
        (
            {"contexts": [NodeWithScore(SimpleNamespace(node_id=1, text="t"))]},
            "node.node_id: expected a string",
        ),
    ],
)
def test_malformed_outputs_name_the_expected_shape_without_values(
    raw: object, message: str
) -> None:
    with pytest.raises(OutputShapeError, match="expected") as info:
        normalize_output(raw)
    text = str(info.value)
    assert message in text
    assert SECRET not in text


def test_refusal_lists_the_accepted_shapes() -> None:
    with pytest.raises(OutputShapeError) as info:
        normalize_output({"contexts": [1.5]})
    for shape in ("a string", "{id, text, metadata}", "page_content", "NodeWithScore"):
        assert shape in str(info.value)


def test_context_equality_ignores_metadata_and_is_hashable() -> None:
    a = Context("c", "t", "d", None, {"k": 1})
    b = Context("c", "t", "d", None, {"k": 2})
    assert a == b
    assert len({a, b}) == 1


def test_default_metadata_is_an_empty_mapping() -> None:
    ctx = Context("c", "t", "c")
    assert isinstance(ctx.metadata, Mapping)
    assert dict(ctx.metadata) == {}


# -- framework outputs, duck-typed like the real classes (the packages are not installed) --


@dataclass
class HaystackDocument:
    """haystack.Document: id, content, meta, score (and more, e.g. embedding)."""

    id: str
    content: str | None
    meta: dict[str, Any] = field(default_factory=dict)
    score: float | None = None
    embedding: list[float] | None = None


@dataclass
class LlamaTextNode:
    """llama_index.core.schema.TextNode: node_id, text, metadata, ref_doc_id, get_content()."""

    node_id: str
    text: str
    metadata: dict[str, Any] = field(default_factory=dict)
    ref_doc_id: str | None = None

    def get_content(self, metadata_mode: str = "none") -> str:
        return self.text


@dataclass
class LlamaResponse:
    """llama_index.core.base.response.schema.Response."""

    response: str | None
    source_nodes: list[NodeWithScore] = field(default_factory=list)
    metadata: dict[str, Any] | None = None


def test_haystack_documents() -> None:
    docs = [
        HaystackDocument("h1", "t1", {"document_id": "guide.md"}, 0.7),
        HaystackDocument("h2", "t2", {}, None),
    ]
    out = normalize_output({"answer": "x", "contexts": docs})
    assert out.contexts == (Context("h1", "t1", "guide.md", 0.7), Context("h2", "t2", "h2"))
    assert out.contexts[0].metadata == {"document_id": "guide.md"}


def test_haystack_document_without_content_is_refused() -> None:
    with pytest.raises(OutputShapeError, match=r"context 1 \(1-based\) content: expected a string"):
        normalize_output({"contexts": [HaystackDocument("h1", None)]})


@pytest.mark.parametrize("text_key", ["text", "content", "page_content"])
@pytest.mark.parametrize("id_key", ["id", "doc_id", "source", "document_id"])
def test_mapping_text_and_id_aliases(text_key: str, id_key: str) -> None:
    out = normalize_output({"contexts": [{text_key: "body", id_key: "c7", "meta": {"k": 1}}]})
    assert out.contexts is not None
    (ctx,) = out.contexts
    assert (ctx.id, ctx.text, ctx.document_id) == ("c7", "body", "c7")
    assert ctx.metadata == {"k": 1}


def test_haystack_document_as_dict() -> None:
    # Document.to_dict(): id, content, meta (flattened or not), score
    raw = {"id": "h1", "content": "t", "meta": {"source": "a.md"}, "score": 0.25}
    out = normalize_output({"answer": "x", "contexts": [raw]})
    assert out.contexts == (Context("h1", "t", "a.md", 0.25),)


def test_llamaindex_response() -> None:
    response = LlamaResponse(
        "the answer",
        [
            NodeWithScore(LlamaTextNode("n1", "t1", {"file_name": "a.pdf"}, "doc-a"), 0.8),
            NodeWithScore(LlamaTextNode("n2", "t2", {"document_id": "meta-doc"}, "doc-b"), 0.5),
            NodeWithScore(LlamaTextNode("n3", "t3"), None),
        ],
    )
    out = normalize_output(response)
    assert out.answer == "the answer"
    assert out.contexts == (
        Context("n1", "t1", "doc-a", 0.8),  # ref_doc_id is the document
        Context("n2", "t2", "meta-doc", 0.5),  # metadata["document_id"] comes first
        Context("n3", "t3", "n3", None),
    )


def test_bare_llamaindex_nodes() -> None:
    out = normalize_output({"answer": "x", "contexts": [LlamaTextNode("n1", "t", {}, "d")]})
    assert out.contexts == (Context("n1", "t", "d"),)


def test_langchain_create_retrieval_chain_output() -> None:
    raw = {
        "input": "the question",
        "context": [
            LangChainDoc("t1", {"source": "docs/refunds.md", "page": 2}, id="lc-1"),
            LangChainDoc("t2", {"source": "docs/plans.md", "document_id": "plans"}),
        ],
        "answer": "30 days",
    }
    out = normalize_output(raw)
    assert out.answer == "30 days"
    assert out.contexts is not None
    assert [(c.id, c.document_id) for c in out.contexts] == [
        ("lc-1", "docs/refunds.md"),
        (_sha16("t2"), "plans"),
    ]


def test_unrecognised_context_names_attributes_not_values() -> None:
    @dataclass
    class Chunk:
        body: str
        ref: str

    with pytest.raises(OutputShapeError) as info:
        normalize_output({"answer": "x", "contexts": ["ok", Chunk(SECRET, SECRET)]})
    text = str(info.value)
    assert text.startswith(
        "context 2 (1-based): a Chunk with attributes 'body', 'ref' is not a recognised shape; "
        "expected a string; a mapping {id, text, metadata}"
    )
    for shape in ("LangChain Document", "Haystack Document", "LlamaIndex NodeWithScore"):
        assert shape in text
    assert SECRET not in text


def test_many_attribute_names_are_shortened() -> None:
    obj = SimpleNamespace(**{f"a{i:02d}": SECRET for i in range(20)})
    with pytest.raises(OutputShapeError) as info:
        normalize_output({"contexts": [obj]})
    assert "'a11' (+8 more)" in str(info.value)
    assert SECRET not in str(info.value)
