-- The previous release's bodies are gone with its release: nothing to put back.
SELECT 1;
