# Written by `npm run build` from package.json, where svc's version lives: change it there.
__version__ = "0.1.0"
