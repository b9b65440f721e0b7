"""The HTTP edge: Falcon resources that authenticate, validate, call one SQL
function and map its outcome to a response."""
