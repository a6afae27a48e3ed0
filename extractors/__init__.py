"""hwnoise.extractors"""
