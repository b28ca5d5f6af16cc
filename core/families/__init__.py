"""The format families: each format's stages, as the pipeline asks them (`project.family.CaseFamily`).

A family composes what its format has on each floor below (its loader in `formats/`, its cases in
`project/`, its run in `run/`, its baseline writes in `baselines/`, its review in `reports/`); nothing
below imports a family: the registry (`project.family.REGISTERED`) loads each when first asked.
"""
