"""sklearn-ranknet: learning to rank in scikit-learn."""
