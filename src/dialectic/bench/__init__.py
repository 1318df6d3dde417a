"""``dialectic bench``: does debating beat asking one model once, or several times, at equal cost?

Every arm answers the same questions with the same model; accuracies come with bootstrap
confidence intervals and paired differences, and what hides inside "wrong" (unparseable
answers, replies cut off by the token limit, vote ties, agents changing their minds) is
counted separately. See ``docs/bench.md``.
"""
