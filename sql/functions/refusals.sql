-- The one way a function refuses arguments that break its invariants: a
-- stable message (the error's name, e.g. job_invalid_failure_code) with
-- SQLSTATE 22023 (invalid_parameter_value), never the offending value. A
-- NULL condition refuses nothing, as the IF it replaces did.
CREATE OR REPLACE FUNCTION boardready_private.refuse_if(p_refused boolean, p_error text)
RETURNS void LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  IF p_refused THEN
    RAISE EXCEPTION '%', p_error USING ERRCODE = '22023';
  END IF;
END $$;
