-- Sandbox data (psd2ctl sandbox-seed).
--
-- The current definition of each function: applied whole, after the
-- migrations, by every `psd2ctl migrate` (see src/db/README.md).

-- 011_ais_sandbox: the sandbox's account data, loaded by
-- `psd2ctl sandbox-seed` (which calls sandbox_seed_data() when it exists,
-- after creating the sandbox PSUs and accounts). Idempotent: what exists
-- stays as it is. Deterministic: the same rows every time, relative to the
-- day of the first seeding (two years back from then).
-- A stable pseudo-random non-negative number from a text key.
CREATE OR REPLACE FUNCTION sandbox_hash(p_key text) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$
	SELECT ('x' || substr(md5(p_key), 1, 15))::bit(60)::bigint;
$$;

CREATE OR REPLACE FUNCTION sandbox_seed_account(p_resource_id text, p_count integer,
    p_salary_minor bigint, p_texts text[])
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
	acc account%ROWTYPE;
	n integer;
BEGIN
	SELECT * INTO acc FROM account WHERE resource_id = p_resource_id;
	IF NOT FOUND THEN
		RETURN 0;
	END IF;
	INSERT INTO account_transaction (account_id, transaction_id,
	    booking_date, value_date, amount_minor, currency, explanation)
	SELECT acc.id,
	    upper(substr(md5(p_resource_id || ':tx:' || i), 1, 12)) || '-' ||
		lpad(i::text, 5, '0'),
	    d.day, d.day - (sandbox_hash(p_resource_id || ':v:' || i) % 3)::int,
	    CASE
		-- a salary or transfer in every ~30 entries
		WHEN i % 31 = 7 THEN p_salary_minor
		    + sandbox_hash(p_resource_id || ':s:' || i) % 10000
		-- refunds and incoming transfers
		WHEN sandbox_hash(p_resource_id || ':k:' || i) % 9 = 0 THEN
		    1 + sandbox_hash(p_resource_id || ':a:' || i) % 25000
		-- card payments, debits: negative
		ELSE -(1 + sandbox_hash(p_resource_id || ':a:' || i) % 15000)
	    END,
	    acc.currency,
	    p_texts[1 + (sandbox_hash(p_resource_id || ':t:' || i)
		% cardinality(p_texts))::int]
	FROM generate_series(1, p_count) AS i
	CROSS JOIN LATERAL (SELECT (current_date - (i::bigint * 731 / p_count)::int)
	    AS day) d
	ON CONFLICT (transaction_id) DO NOTHING;
	GET DIAGNOSTICS n = ROW_COUNT;
	RETURN n;
END;
$$;

CREATE OR REPLACE FUNCTION sandbox_seed_data() RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
	de text[] := ARRAY[
	    'REWE Markt GmbH Köln',
	    'Bäckerei Müller, Düsseldorf',
	    'Miete Wohnung Schloßstraße 12',
	    'Gehalt Example Bank AG',
	    'Überweisung an Jürgen Weiß',
	    'Lastschrift Stadtwerke München',
	    'Kartenzahlung Café Crème',
	    'Rückerstattung "Bahn-Ticket" DB Fernverkehr',
	    'Spende Ärzte ohne Grenzen',
	    'Amazon EU S.à r.l. Bestellung 302-1234567',
	    'Straßenbahn Abo – März',
	    'Pfad C:\Belege\2024\Quittung.pdf',
	    'Zinsgutschrift',
	    'Buchhandlung Hugendubel «Krimi»',
	    'Apotheke am Dom – Rezept №42',
	    'Kartenzahlung	Tankstelle (Tab im Text)',
	    'Versicherung Allianz Kfz ‘Haftpflicht’',
	    'Restaurant Łódź Pierogi',
	    'Fahrrad Großhändler Øresund ApS',
	    'Kaffee ☕ to go',
	    'Geldautomat Sparkasse',
	    'Mitgliedsbeitrag Turnverein 1860 e.V.'];
	nl text[] := ARRAY[
	    'Albert Heijn 1234 Utrecht',
	    'Salaris Voorbeeld B.V.',
	    'Huur appartement Keizersgracht',
	    'NS Reizigers "OV-chipkaart"',
	    'Zoë''s Boekhandel Den Haag',
	    'Café ''t Hoekje',
	    'Belastingdienst toeslag',
	    'Overboeking naar Renée Dijkstra',
	    'Jumbo Supermarkten – Eindhoven',
	    'Ziektekostenverzekering CZ',
	    'Terugbetaling \ Tikkie',
	    'Crème brûlée bij Brasserie Señor',
	    'Geldautomaat ING',
	    'Energie Vattenfall – voorschot',
	    'Bol.com bestelling № 8812'];
	n integer := 0;
BEGIN
	n := n + sandbox_seed_account('DE-anna-giro', 2200, 285000, de);
	n := n + sandbox_seed_account('DE-anna-savings', 2050, 50000, de);
	n := n + sandbox_seed_account('NL-bram-current', 2100, 312000, nl);
	INSERT INTO balance (account_id, amount_minor, last_change_at,
	    reference_date)
	SELECT a.id, v.minor, now(), current_date
	FROM (VALUES ('DE-anna-giro', 123450::bigint),
	    ('DE-anna-savings', 2500010), ('NL-bram-current', 98765)) v(rid, minor)
	JOIN account a ON a.resource_id = v.rid
	ON CONFLICT (account_id) DO NOTHING;
	RETURN n;
END;
$$;
