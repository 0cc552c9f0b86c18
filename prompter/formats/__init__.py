"""Model formats: a local model's chat format as frozen data, and everything that makes it exact.

- ``model_format``: the ``ModelFormat`` dataclass and its public methods;
- ``registry``: the 40 shipped families as plain data, looked up by family or model id;
- ``derive``: fixed strings derived from a chat template by probing;
- ``fixed``: the no-jinja fast path built from a derived layout;
- ``prepare``: messages, tools and documents made ready for a template;
- ``traits``: what a template does with tools, documents, a system message, arguments (probed);
- ``continuation``: ``continue_final_message``, cut as transformers cuts it;
- ``rendered``: what the others share (``Rendered``, the fields rendering reads);
- ``sandbox``: the immutable, budgeted jinja2 environment templates run in;
- ``spans``: where user content lands in a rendered string;
- ``sources``: the template sources, tokens and name ``from_chat_template`` accepts, checked;
- ``tokens``: the special tokens a template writes, and the one that ends its assistant turn (probed);
- ``chat_templates/``: the real templates, shipped beside the code that reads them.

Imports point one way (``tests/formats/test_formats_import_graph.py`` keeps it so):
``model_format`` -> ``registry``, ``rendered``, ``fixed``; ``fixed`` -> ``derive``, ``prepare``,
``spans``, ``traits``, ``continuation`` -> ``sandbox``, ``rendered``. Nothing imports
``model_format``; ``registry`` is plain data.
"""
