# SPDX-License-Identifier: LGPL-2.1-or-later
# 2D separable model of the decimated Gaussian: B-spline down by k, Gaussian on the small grid
# (radius ceil(4 s)), Catmull-Rom up; point source error relative to the exact blur's peak.
import numpy as np, math
def bspline3(t):
    t=abs(t)
    if t<1: return 2/3-t*t+0.5*t**3
    if t<2: u=2-t; return u**3/6
    return 0.0
def gauss_w(s, r):
    w=np.array([math.exp(-0.5*(i/s)**2) for i in range(-r,r+1)]); return w/w.sum()
def cr(f):
    f2=f*f; f3=f2*f
    return [0.5*(-f3+2*f2-f),0.5*(3*f3-5*f2+2),0.5*(-3*f3+4*f2+f),0.5*(f3-f2)]
def model1d(n, pos, sigma, k):
    c=(k-1)/2; ft=math.floor(c-2*k)+1; lt=math.ceil(c+2*k)-1
    taps=[bspline3((m-c)/k) for m in range(ft,lt+1)]; norm=1/sum(taps)
    ss=math.sqrt(max(sigma*sigma-k*k/3,0))/k; r=math.ceil(4*ss); margin=r+2
    small=(n+k-1)//k+2*margin
    x=np.zeros(n); x[pos]=1.0
    ext=lambda i: x[i] if 0<=i<n else 0.0
    S=np.zeros(small)
    for i in range(small):
        base=k*(i-margin)+ft
        S[i]=norm*sum(taps[t]*ext(base+t) for t in range(len(taps)))
    w=gauss_w(ss,r); B=np.convolve(np.pad(S,r,mode='edge'),w,mode='valid')
    out=np.zeros(n)
    for p in range(n):
        u=(p-c)/k+margin; j=math.floor(u); f=u-j
        ww=cr(f); out[p]=sum(ww[m]*B[j-1+m] for m in range(4))
    exact=np.array([math.exp(-0.5*((p-pos)/sigma)**2) for p in range(n)]); exact/=exact.sum()
    return out, exact
for sigma,k in [(4,2),(5.5,2),(6,2),(6,3),(7,2),(7,3),(7.5,3),(8,2),(8,3),(12.5,4),(25,7),(50,13)]:
    n=int(max(200,14*sigma)); pos=n//2+3
    worst=0
    # 2D: outer product of 1D responses; error vs exact 2D
    o,e=model1d(n,pos,sigma,k)
    O=np.outer(o,o); E=np.outer(e,e)
    print(f"sigma {sigma:5} k {k}: point {np.abs(O-E).max()/E.max()*100:.3f} % of its peak")
