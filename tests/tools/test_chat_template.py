"""A model's chat template, read from its directory where transformers looks, rendered with thinking on and off."""

from __future__ import annotations

import json

import pytest

from specops.tools.chat_template import ChatTemplateError, read_chat_template
from specops.tools.hosts import LocalHost

QWEN_LIKE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n"
    "{% if enable_thinking is defined and enable_thinking is false %}<think>\n\n</think>\n\n{% endif %}{% endif %}"
)


def test_the_jinja_file_wins_and_thinking_is_switched(tmp_path):
    (tmp_path / "chat_template.jinja").write_text(
        "{{ bos_token }}{% for m in messages %}[{{ m['content'] }}]{% endfor %}"
        "{% if thinking is defined and thinking is false %}<think></think>{% else %}<think>{% endif %}"
    )
    (tmp_path / "tokenizer_config.json").write_text(
        json.dumps({"bos_token": {"content": "<s>"}, "chat_template": "ignored"})
    )
    template = read_chat_template(LocalHost(), str(tmp_path))
    assert template.source.endswith("chat_template.jinja") and template.has_thinking_switch
    assert template.render("hi", thinking=None) == "<s>[hi]<think>"
    assert template.render("hi", thinking=True) == "<s>[hi]<think>"
    assert template.render("hi", thinking=False) == "<s>[hi]<think></think>"


def test_tokenizer_config_templates_string_or_named(tmp_path):
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"chat_template": QWEN_LIKE}))
    template = read_chat_template(LocalHost(), str(tmp_path))
    assert template.render("2+2?", thinking=False).endswith("<think>\n\n</think>\n\n")
    assert "<think>" not in template.render("2+2?", thinking=True)
    (tmp_path / "tokenizer_config.json").write_text(
        json.dumps(
            {
                "chat_template": [
                    {"name": "tool_use", "template": "tools"},
                    {"name": "default", "template": "{{ messages[0]['content'] }}"},
                ]
            }
        )
    )
    plain = read_chat_template(LocalHost(), str(tmp_path))
    assert plain.render("x", thinking=None) == "x" and not plain.has_thinking_switch


def test_no_template_is_none_and_a_broken_one_is_an_error(tmp_path):
    assert read_chat_template(LocalHost(), str(tmp_path)) is None
    (tmp_path / "tokenizer_config.json").write_text("{not json")
    with pytest.raises(ChatTemplateError):
        read_chat_template(LocalHost(), str(tmp_path))
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"chat_template": "{{ raise_exception('no system') }}"}))
    with pytest.raises(ChatTemplateError, match="no system"):
        read_chat_template(LocalHost(), str(tmp_path)).render("x", thinking=None)


def test_the_switch_is_a_variable_the_template_reads_not_a_word_in_it(tmp_path):
    (tmp_path / "chat_template.jinja").write_text(
        "{# no thinking switch here #}Be a thinking assistant. {% set thinking = true %}{{ messages[0]['content'] }}"
    )
    template = read_chat_template(LocalHost(), str(tmp_path))
    assert not template.has_thinking_switch and template.render("x", thinking=None).endswith("x")
    (tmp_path / "chat_template.jinja").write_text("{% if thinking %}")
    with pytest.raises(ChatTemplateError):
        _ = read_chat_template(LocalHost(), str(tmp_path)).has_thinking_switch
