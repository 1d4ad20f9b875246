"""Porting a tree: strategy, translation engines, side files, the plan, the writer into the tree, verify."""
