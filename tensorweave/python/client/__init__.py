"""`tensorflow.python.client`: the modules programs import by that path (`timeline`)."""
