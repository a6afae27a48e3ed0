"""hwnoise.forms"""
