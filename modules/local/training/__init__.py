"""Fine-tuning with the prompter that serves the model: examples, datasets, the training loop.

``TrainableModule.training_example``, ``.training_examples`` and ``.finetune`` delegate here.
"""
