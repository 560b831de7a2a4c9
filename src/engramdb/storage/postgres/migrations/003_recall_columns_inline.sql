-- Keep what recall reads in the heap row: the vector and the text index stay inline (STORAGE
-- MAIN: moved out only when a row could not fit a page), and the bulky columns recall never
-- scans (the event, the texts) move to TOAST as soon as a row passes 2 kB. Out of line, a
-- vector cost a TOAST index probe and page per row on every scan (bench/RESULTS.md, Scale).
-- Existing rows keep their layout until rewritten (a new vector rewrites its row).
ALTER TABLE {schema}.memories
    ALTER COLUMN embedding SET STORAGE MAIN,
    ALTER COLUMN tsv SET STORAGE MAIN,
    SET (toast_tuple_target = 128);
