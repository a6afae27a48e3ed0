"""hwnoise.training"""
