# SPDX-License-Identifier: LGPL-2.1-or-later
# A step through the decimated path along one axis (the model of decimated_model.py, linear:
# the step is the sum of point responses), its worst error of the height against the exact blur.
import numpy as np, math, sys
exec(open(__file__.replace('step_model.py', 'decimated_model.py')).read().split('for sigma,k in')[0])
def step_err(sigma,k):
    n=int(max(200,14*sigma)); 
    # responses for positions around the centre: linear model, columns of M
    c0=n//2; span=int(6*sigma)+4*k
    cols={}
    for pos in range(c0-span, c0+span+1):
        o,e=model1d(n,pos,sigma,k); cols[pos]=(o,e)
    worst=0
    for s in range(c0-3*k, c0+3*k):   # step positions across the small grid's phases
        out=sum(cols[p][0] for p in cols if p>=s); ex=sum(cols[p][1] for p in cols if p>=s)
        lo=c0-span//2; hi=c0+span//2
        worst=max(worst, np.abs(out[lo:hi]-ex[lo:hi]).max())
    return worst
for sigma,k in [(4,2),(6,3),(5.75,3),(5.5,3),(5.25,3)]:
    print(sigma,k,f"step {step_err(sigma,k)*100:.4f} % of its height")
