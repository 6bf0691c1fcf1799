# Puma drains on SIGTERM and then exits 0 instead of re-raising it.
raise_exception_on_sigterm false
