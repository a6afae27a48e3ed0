"""hwnoise.features"""
